// Package tcpinfo sums what the kernel's TCP_INFO says of a workload's
// connections: the sender's retransmits, the smoothed round trip and the
// congestion window, as stream records retransmits, for the workloads
// that make many connections or few (rr, crr, ping-pong's siege).
package tcpinfo

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Stats is what TCP_INFO said of one side's connections. Retransmits are
// that side's, as a sender: segments it sent again (requests, its SYN and
// FIN); what the peer sent and lost is retransmitted by the peer and not
// counted here.
type Stats struct {
	Connections int64 `json:"connections"` // connections read
	// Retransmits is the sum of tcpi_total_retrans over the connections.
	Retransmits int64 `json:"retransmits"`
	// RTTUS and RTTVarUS are the means over the connections of the
	// kernel's smoothed round trip (tcpi_rtt) and its variation
	// (tcpi_rttvar), in µs; RTTMaxUS the largest smoothed round trip.
	RTTUS    float64 `json:"rtt_us"`
	RTTVarUS float64 `json:"rttvar_us"`
	RTTMaxUS float64 `json:"rtt_max_us"`
	// Cwnd is the mean of the congestion window (tcpi_snd_cwnd), in
	// segments; CwndMin its smallest.
	Cwnd    float64 `json:"snd_cwnd"`
	CwndMin int64   `json:"snd_cwnd_min"`
}

// Acc sums TCP_INFO readings; it allocates nothing, so a hot path can
// add a reading per connection. Not safe for concurrent use: one per
// worker, merged at the end.
type Acc struct {
	n, retrans, rtt, rttvar, cwnd uint64
	rttMax                        uint32
	cwndMin                       uint32
	info                          unix.TCPInfo // the buffer getsockopt fills
}

// Add sums one connection's reading.
func (a *Acc) Add(in *unix.TCPInfo) {
	a.add(reading{retrans: in.Total_retrans, rtt: in.Rtt, rttvar: in.Rttvar, cwnd: in.Snd_cwnd})
}

// reading is what an Acc keeps of one TCP_INFO: a Book holds one per live
// connection while a snapshot reads them.
type reading struct{ retrans, rtt, rttvar, cwnd uint32 }

func (a *Acc) add(r reading) {
	if a.n == 0 || r.cwnd < a.cwndMin {
		a.cwndMin = r.cwnd
	}
	a.n++
	a.retrans += uint64(r.retrans)
	a.rtt += uint64(r.rtt)
	a.rttvar += uint64(r.rttvar)
	a.cwnd += uint64(r.cwnd)
	a.rttMax = max(a.rttMax, r.rtt)
}

// Merge adds b's readings to a.
func (a *Acc) Merge(b *Acc) {
	if b.n == 0 {
		return
	}
	if a.n == 0 || b.cwndMin < a.cwndMin {
		a.cwndMin = b.cwndMin
	}
	a.n += b.n
	a.retrans += b.retrans
	a.rtt += b.rtt
	a.rttvar += b.rttvar
	a.cwnd += b.cwnd
	a.rttMax = max(a.rttMax, b.rttMax)
}

// Stats is the summary of a's readings; nil if there were none.
func (a *Acc) Stats() *Stats {
	if a.n == 0 {
		return nil
	}
	n := float64(a.n)
	return &Stats{Connections: int64(a.n), Retransmits: int64(a.retrans),
		RTTUS: float64(a.rtt) / n, RTTVarUS: float64(a.rttvar) / n, RTTMaxUS: float64(a.rttMax),
		Cwnd: float64(a.cwnd) / n, CwndMin: int64(a.cwndMin)}
}

// ReadFd adds fd's TCP_INFO with one raw getsockopt (no scheduler, no
// allocation); false if the kernel
// would not say.
func (a *Acc) ReadFd(fd int) bool {
	if !readFd(fd, &a.info) {
		return false
	}
	a.Add(&a.info)
	return true
}

// readFd fills info with fd's TCP_INFO; false if the kernel would not say.
func readFd(fd int, info *unix.TCPInfo) bool {
	n := uint32(unsafe.Sizeof(*info))
	_, _, e := syscall.RawSyscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), syscall.IPPROTO_TCP, syscall.TCP_INFO,
		uintptr(unsafe.Pointer(info)), uintptr(unsafe.Pointer(&n)), 0)
	// A kernel older than the struct fills less of it; the fields read
	// here are all in the first 104 bytes (Linux 2.6's struct).
	return e == 0 && n >= uint32(unsafe.Offsetof(info.Total_retrans))+4
}

// ReadConn adds c's TCP_INFO, if c is a kernel socket.
func (a *Acc) ReadConn(c net.Conn) bool {
	if !readConn(c, &a.info) {
		return false
	}
	a.Add(&a.info)
	return true
}

// Retransmits is the total of segments c retransmitted, from its TCP_INFO;
// false if c is no open kernel socket or the kernel would not say.
func Retransmits(c net.Conn) (int64, bool) {
	var info unix.TCPInfo
	ok := readConn(c, &info)
	return int64(info.Total_retrans), ok
}

// readConn fills info with c's TCP_INFO, if c is an open kernel socket.
func readConn(c net.Conn, info *unix.TCPInfo) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	read := false
	if err := raw.Control(func(fd uintptr) { read = readFd(int(fd), info) }); err != nil {
		return false
	}
	return read
}
