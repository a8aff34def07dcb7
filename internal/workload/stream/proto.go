package stream

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// The control protocol: JSON messages, one per line, on the control
// connection.
//
//	client → server  {"type":"test", ...parameters, "cookie"}
//	server → client  {"type":"accept"} or {"type":"error", "error", "busy"}
//	client           TCP: opens `parallel` data connections to the same port,
//	                 each starting with dataMagic, the cookie and its stream index
//	client → server  {"type":"start"}
//	server → client  {"type":"started"} (the server's clock starts)
//	client           sends for omit+duration; closes its data connections
//	client → server  {"type":"done", "elapsed_ns", "sent"}
//	server → client  {"type":"results", "edges", "streams"} or {"type":"error"}
//
// UDP datagrams go to the control port's number over UDP and start with a
// 24-byte header: sequence number (8), send time in Unix ns (8), test id
// (the cookie's first 4 bytes), stream index (4), all big endian.
type message struct {
	Type string `json:"type"`

	// test
	Protocol   string `json:"protocol,omitempty"`
	DurationNS int64  `json:"duration_ns,omitempty"`
	OmitNS     int64  `json:"omit_ns,omitempty"`
	IntervalNS int64  `json:"interval_ns,omitempty"`
	Parallel   int    `json:"parallel,omitempty"`
	Length     int    `json:"length,omitempty"`
	Rate       int64  `json:"rate,omitempty"`
	Threads    int    `json:"threads,omitempty"` // the receiver's reading threads; 0: one
	Cookie     string `json:"cookie,omitempty"`

	// error
	Error string `json:"error,omitempty"`
	Busy  bool   `json:"busy,omitempty"`

	// done
	ElapsedNS int64    `json:"elapsed_ns,omitempty"`
	Sent      []uint64 `json:"sent,omitempty"` // UDP: datagrams sent per stream (next sequence number)

	// results
	Edges   []float64      `json:"edges,omitempty"` // interval edges in seconds; len = bins + 1
	Streams []receiverBins `json:"streams,omitempty"`
}

// receiverBins is what the server received on one stream, per interval.
type receiverBins struct {
	Bytes      []int64 `json:"bytes"`
	Packets    []int64 `json:"packets,omitempty"`
	Lost       []int64 `json:"lost,omitempty"`
	OutOfOrder []int64 `json:"out_of_order,omitempty"`
}

const (
	dataMagic     = 'D'
	cookieLen     = 16
	dataHeaderLen = 1 + cookieLen + 4
)

func (m message) config() Config {
	return Config{
		Protocol: m.Protocol,
		Duration: time.Duration(m.DurationNS),
		Omit:     time.Duration(m.OmitNS),
		Interval: time.Duration(m.IntervalNS),
		Parallel: m.Parallel,
		Length:   m.Length,
		Rate:     m.Rate,
		Threads:  m.Threads,
	}
}

func testMessage(c Config, cookie [cookieLen]byte) message {
	return message{
		Type:       "test",
		Protocol:   c.Protocol,
		DurationNS: int64(c.Duration),
		OmitNS:     int64(c.Omit),
		IntervalNS: int64(c.Interval),
		Parallel:   c.Parallel,
		Length:     c.Length,
		Rate:       c.Rate,
		Threads:    c.Threads,
		Cookie:     hex.EncodeToString(cookie[:]),
	}
}

func parseCookie(s string) (c [cookieLen]byte, err error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != cookieLen {
		return c, fmt.Errorf("bad cookie %q", serverkit.Clip(s))
	}
	copy(c[:], b)
	return c, nil
}
