// Package udp implements cnperf's one-way UDP workloads: jitter (iperf's
// constant-rate UDP test with RFC 3550 interarrival jitter) and datagram (in
// the style of Oracle Coherence's Datagram Test: packet size, rate limit,
// count or duration; received, missing, success rate, out of order, average
// offset). A sender paces datagrams, a listener measures them and hands its
// report back over a small TCP control connection on the same port.
package udp

import (
	"encoding/binary"
	"errors"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// Datagram layout, big-endian:
//
//	0  magic      uint32 "cnud"
//	4  test id    uint32
//	8  sequence   uint64, from 0
//	16 send time  int64, sender's time.Now().UnixNano()
//	24 padding up to the datagram size
const Magic uint32 = 0x636e7564 // "cnud"

// Header is what every test datagram starts with.
type Header struct {
	TestID uint32
	Seq    uint64
	SendNS int64 // sender's wall clock, ns since the epoch
}

// Errors of ParseHeader.
var (
	ErrShort    = errors.New("datagram shorter than the header")
	ErrBadMagic = errors.New("datagram without cnperf's magic")
)

// Put writes h at the start of b, which must hold descriptors.UDPHeaderSize bytes.
func (h Header) Put(b []byte) {
	binary.BigEndian.PutUint32(b[0:], Magic)
	binary.BigEndian.PutUint32(b[4:], h.TestID)
	binary.BigEndian.PutUint64(b[8:], h.Seq)
	binary.BigEndian.PutUint64(b[16:], uint64(h.SendNS))
}

// ParseHeader reads the header of datagram b.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < descriptors.UDPHeaderSize {
		return Header{}, ErrShort
	}
	if binary.BigEndian.Uint32(b) != Magic {
		return Header{}, ErrBadMagic
	}
	return Header{
		TestID: binary.BigEndian.Uint32(b[4:]),
		Seq:    binary.BigEndian.Uint64(b[8:]),
		SendNS: int64(binary.BigEndian.Uint64(b[16:])),
	}, nil
}
