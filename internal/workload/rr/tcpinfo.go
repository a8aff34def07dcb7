package rr

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TCPStats is what the kernel's TCP_INFO said of the client's connections,
// as stream records retransmits: tcp reads each worker's connection at the
// run's end, crr each measured transaction's connection before its close.
// Retransmits are the client's (sender) side: segments it sent again
// (requests, its SYN and FIN); the server's responses lost on the way are
// retransmitted by the server and not counted here.
type TCPStats struct {
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

// tcpAcc sums one worker's TCP_INFO readings; it allocates nothing, so
// crr's hot path can add a reading per connection.
type tcpAcc struct {
	n, retrans, rtt, rttvar, cwnd uint64
	rttMax                        uint32
	cwndMin                       uint32
	info                          unix.TCPInfo // the buffer getsockopt fills
}

// add sums one connection's reading.
func (a *tcpAcc) add(in *unix.TCPInfo) {
	if a.n == 0 || in.Snd_cwnd < a.cwndMin {
		a.cwndMin = in.Snd_cwnd
	}
	a.n++
	a.retrans += uint64(in.Total_retrans)
	a.rtt += uint64(in.Rtt)
	a.rttvar += uint64(in.Rttvar)
	a.cwnd += uint64(in.Snd_cwnd)
	a.rttMax = max(a.rttMax, in.Rtt)
}

// merge adds b's readings to a.
func (a *tcpAcc) merge(b *tcpAcc) {
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

// stats is the summary of a's readings; nil if there were none.
func (a *tcpAcc) stats() *TCPStats {
	if a.n == 0 {
		return nil
	}
	n := float64(a.n)
	return &TCPStats{Connections: int64(a.n), Retransmits: int64(a.retrans),
		RTTUS: float64(a.rtt) / n, RTTVarUS: float64(a.rttvar) / n, RTTMaxUS: float64(a.rttMax),
		Cwnd: float64(a.cwnd) / n, CwndMin: int64(a.cwndMin)}
}

// readFd adds fd's TCP_INFO with one raw getsockopt (no scheduler, no
// allocation: crr calls it once per connection); false if the kernel
// would not say.
func (a *tcpAcc) readFd(fd int) bool {
	n := uint32(unsafe.Sizeof(a.info))
	_, _, e := syscall.RawSyscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), syscall.IPPROTO_TCP, syscall.TCP_INFO,
		uintptr(unsafe.Pointer(&a.info)), uintptr(unsafe.Pointer(&n)), 0)
	// A kernel older than the struct fills less of it; the fields read
	// here are all in the first 104 bytes (Linux 2.6's struct).
	if e != 0 || n < uint32(unsafe.Offsetof(a.info.Total_retrans))+4 {
		return false
	}
	a.add(&a.info)
	return true
}

// readSock adds s's TCP_INFO: its descriptor, or a conn's socket.
func (a *tcpAcc) readSock(s *sock) bool {
	if s == nil {
		return false
	}
	if s.detached() {
		return a.readFd(s.fd)
	}
	return a.readConn(s.c)
}

// readConn adds c's TCP_INFO, if c is a kernel socket.
func (a *tcpAcc) readConn(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	read := false
	if err := raw.Control(func(fd uintptr) { read = a.readFd(int(fd)) }); err != nil {
		return false
	}
	return read
}
