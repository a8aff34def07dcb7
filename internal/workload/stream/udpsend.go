package stream

import (
	"encoding/binary"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// udpBlast sends one UDP stream as fast as it can (rate unlimited): on its
// own non-blocking duplicate of the socket, out of Go's netpoller, with raw
// writes (hotcall.go), each carrying gso datagrams when the kernel
// segments them (UDP_SEGMENT, generic segmentation offload): one system
// call and one trip down the stack per 64 KiB instead of per datagram. A
// full socket buffer is waited out in poll. Every datagram has its own
// header (sequence, send time, test, stream), as without GSO, so the
// receiver sees the same stream either way.
type udpBlast struct {
	fd   int
	gso  int // datagrams per write; 1: no GSO
	stop atomic.Bool
}

// maxGSOSegments is the datagrams one GSO write carries at most (the
// kernel's UDP_MAX_SEGMENTS is 64 on older kernels).
const maxGSOSegments = 64

const udpSegment = unix.UDP_SEGMENT

// newUDPBlast takes over c (closed on success); nil when c has no
// descriptor. gso asks for segmentation offload.
func newUDPBlast(c net.Conn, length int, gso bool) *udpBlast {
	fd, ok := dupFd(c)
	if !ok {
		return nil
	}
	c.Close()
	b := &udpBlast{fd: fd, gso: 1}
	if k := min(maxGSOSegments, descriptors.MaxUDPPayload/length); gso && k > 1 {
		if syscall.SetsockoptInt(fd, syscall.IPPROTO_UDP, udpSegment, length) == nil {
			b.gso = k
		}
	}
	return b
}

// run sends until end or stop; it returns the datagrams numbered (sent or
// refused) and the error that ended it, if not the end.
func (b *udpBlast) run(id uint32, stream, length int, ctr *counter, t0, end time.Time) (uint64, error) {
	buf := make([]byte, b.gso*length)
	for k := range b.gso {
		binary.BigEndian.PutUint32(buf[k*length+16:], id)
		binary.BigEndian.PutUint32(buf[k*length+20:], uint32(stream))
	}
	var seq uint64
	var y serverkit.Yielder
	endAt := end.Sub(t0)
	for !b.stop.Load() {
		now := time.Since(t0)
		if now >= endAt {
			return seq, nil
		}
		y.Maybe(now, yieldEvery)
		ns := uint64(t0.Add(now).UnixNano())
		for k := range b.gso {
			binary.BigEndian.PutUint64(buf[k*length:], seq+uint64(k))
			binary.BigEndian.PutUint64(buf[k*length+8:], ns)
		}
		n, e := rawWrite(uintptr(b.fd), buf)
		switch e {
		case 0:
			k := int64((n + length - 1) / length)
			seq += uint64(k)
			ctr.packets.Add(k)
			ctr.bytes.Add(int64(n))
		case syscall.EAGAIN:
			b.wait(min(endAt-now, yieldEvery))
		case syscall.ECONNREFUSED, syscall.ENOBUFS:
			seq += uint64(b.gso) // not delivered: the receiver counts them lost
		case syscall.EINVAL, syscall.EMSGSIZE:
			if b.gso == 1 {
				return seq, os.NewSyscallError("write", e)
			}
			// Segments over the path's MTU (an overlay): without GSO.
			_ = syscall.SetsockoptInt(b.fd, syscall.IPPROTO_UDP, udpSegment, 0)
			b.gso = 1
			buf = buf[:length]
		case syscall.EINTR:
		default:
			return seq, os.NewSyscallError("write", e)
		}
	}
	return seq, nil
}

// wait blocks until the socket takes more or d passes, in a call that
// enters the scheduler (it blocks).
func (b *udpBlast) wait(d time.Duration) {
	_, _ = unix.Poll([]unix.PollFd{{Fd: int32(b.fd), Events: unix.POLLOUT}}, int(d/time.Millisecond)+1)
}

func (b *udpBlast) close() { syscall.Close(b.fd) }
