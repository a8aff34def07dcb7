package stream

import (
	"encoding/binary"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
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
	defer syscall.Close(fd)
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
	var y yielder
	start := time.Now()
	for !s.udpStop.Load() {
		y.maybe(time.Since(start))
		n, _, e := syscall.RawSyscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), udpBatch,
			syscall.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
		case syscall.EAGAIN:
			pollIn(fd, 50*time.Millisecond)
			continue
		default:
			continue // EINTR, an ICMP error queued on the socket
		}
		now := time.Now()
		for i := range int(n) {
			b := buf[i*size : i*size+int(msgs[i].len)]
			if len(b) < udpHeaderLen {
				continue
			}
			if t := s.lookup(binary.BigEndian.Uint32(b[16:20])); t != nil {
				t.observeUDPAt(b, now)
			}
		}
	}
	return true
}

// pollIn waits until fd is readable or d passes, in a call that enters the
// scheduler (it blocks).
func pollIn(fd int, d time.Duration) {
	_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(d/time.Millisecond))
}
