package stream

import (
	"encoding/binary"
	"syscall"
	"time"
	"unsafe"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// udpBatch is how many datagrams one recvmmsg(2) takes at most.
const udpBatch = 64

// mmsghdr is struct mmsghdr (linux/socket.h).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// readUDPBatches reads the server's UDP socket as readUDP does, but up to
// udpBatch datagrams per system call (recvmmsg), raw, on a duplicate of the
// socket taken out of Go's netpoller (which would otherwise wake a thread
// for every datagram), one clock reading per batch. It waits in poll when
// the socket is empty. False (nothing done) if the socket cannot be
// duplicated; true once the server stops.
func (s *Server) readUDPBatches() bool {
	fd, ok := dupFd(s.udp)
	if !ok {
		return false
	}
	s.udpMu.Lock()
	if s.udpStop.Load() {
		s.udpMu.Unlock()
		syscall.Close(fd)
		return true
	}
	s.udpFd = fd + 1
	s.udpMu.Unlock()
	defer func() {
		s.udpMu.Lock()
		s.udpFd = 0
		syscall.Close(fd)
		s.udpMu.Unlock()
	}()
	s.udp.Close() // out of the netpoller; the duplicate keeps the socket
	const size = 64 << 10
	buf := make([]byte, udpBatch*size) // bounded: 4 MiB whatever arrives
	iov := make([]unix.Iovec, udpBatch)
	msgs := make([]mmsghdr, udpBatch)
	for i := range msgs {
		iov[i].Base = &buf[i*size]
		iov[i].SetLen(size)
		msgs[i].hdr.Iov = &iov[i]
		msgs[i].hdr.SetIovlen(1)
	}
	var y serverkit.Yielder
	start := time.Now()
	for !s.udpStop.Load() {
		y.Maybe(time.Since(start), yieldEvery)
		n, _, e := syscall.RawSyscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), udpBatch,
			syscall.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
		case syscall.EAGAIN:
			pollIn(fd, udpWait)
			continue
		default:
			continue // EINTR, an ICMP error queued on the socket
		}
		now := time.Now()
		for i := range int(n) {
			b := buf[i*size : i*size+int(msgs[i].len)]
			if len(b) < descriptors.StreamUDPHeader {
				continue
			}
			if t := s.lookup(binary.BigEndian.Uint32(b[16:20])); t != nil {
				t.observeUDPAt(b, now)
			}
		}
	}
	return true
}

// udpWait bounds the UDP reader's wait for the next datagram; the
// server's stop ends it at once (stopUDP). Long, because each wait that
// lasts over 10 ms has sysmon take the reader's P and poll every 20 µs
// for a while after: with 50 ms waits, an idle server woke its CPU a
// thousand times a second, under the tests run on it.
const udpWait = 10 * time.Second

// stopUDP stops the UDP reader: its loop ends, and its wait is woken by
// shutting its socket down (poll then finds the socket readable for good).
func (s *Server) stopUDP() {
	s.udpMu.Lock()
	defer s.udpMu.Unlock()
	s.udpStop.Store(true)
	if s.udpFd > 0 {
		_ = syscall.Shutdown(s.udpFd-1, syscall.SHUT_RDWR)
	}
}

// pollIn waits until fd is readable or d passes, in a call that enters the
// scheduler (it blocks).
func pollIn(fd int, d time.Duration) {
	_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(d/time.Millisecond))
}
