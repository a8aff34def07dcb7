package delayline

import (
	"errors"
	"fmt"
	"net"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vnetHdrLen is the virtio_net_hdr every frame carries on a socket with
// PACKET_VNET_HDR: segmentation (GSO) and checksum state, so that a TCP
// super-frame of up to 64 kB crosses the line as one frame with its
// checksum still to be done, as it crossed the veth, instead of 44
// wire-sized frames.
const vnetHdrLen = 10

// maxFrame is the largest frame read: the virtio header, an Ethernet
// header with a VLAN tag, and a 64 kB GSO packet.
const maxFrame = vnetHdrLen + 18 + 65535

// batchSize is how many frames one recvmmsg or sendmmsg moves.
const batchSize = 64

// port is a raw packet socket on one device: the line reads frames that
// arrive on it and writes frames out of it.
type port struct {
	fd  int
	dev string
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openPort binds a packet socket to dev, in the calling thread's network
// namespace.
func openPort(dev string) (*port, error) {
	ifi, err := net.InterfaceByName(dev)
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", dev, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("packet socket on %s: %w", dev, err)
	}
	p := &port{fd: fd, dev: dev}
	opts := []struct {
		name       string
		level, opt int
		v          int
	}{
		{"PACKET_VNET_HDR", unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1},
		// Frames the line writes come back as outgoing on this socket:
		// the kernel leaves them out (and run skips any that slip by).
		{"PACKET_IGNORE_OUTGOING", unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1},
		// Room for a burst while the thread sleeps or sends.
		{"SO_RCVBUFFORCE", unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16 << 20},
		{"SO_SNDBUFFORCE", unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 16 << 20},
	}
	for _, o := range opts {
		if err := unix.SetsockoptInt(fd, o.level, o.opt, o.v); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("%s on %s: %w", o.name, dev, err)
		}
	}
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind to %s: %w", dev, err)
	}
	return p, nil
}

func (p *port) close() error { return unix.Close(p.fd) }

// rxBatch receives up to batchSize frames in one recvmmsg.
type rxBatch struct {
	msgs  []unix.Mmsghdr
	iovs  []unix.Iovec
	addrs []unix.RawSockaddrLinklayer
	bufs  [][]byte
}

func newRxBatch() *rxBatch {
	b := &rxBatch{msgs: make([]unix.Mmsghdr, batchSize), iovs: make([]unix.Iovec, batchSize),
		addrs: make([]unix.RawSockaddrLinklayer, batchSize), bufs: make([][]byte, batchSize)}
	for i := range b.msgs {
		b.bufs[i] = make([]byte, maxFrame)
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(maxFrame)
		b.msgs[i].Hdr.Iov = &b.iovs[i]
		b.msgs[i].Hdr.SetIovlen(1)
		b.msgs[i].Hdr.Name = (*byte)(unsafe.Pointer(&b.addrs[i]))
	}
	return b
}

// recv reads what is waiting, without blocking: 0 when nothing is.
func (b *rxBatch) recv(fd int) (int, error) {
	for i := range b.msgs {
		b.msgs[i].Hdr.Namelen = unix.SizeofSockaddrLinklayer
		b.msgs[i].Hdr.Flags = 0
		b.msgs[i].Len = 0
	}
	for {
		n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[0])), uintptr(len(b.msgs)), unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		default:
			return 0, fmt.Errorf("recvmmsg: %w", errno)
		}
	}
}

// frame returns the i-th frame received and whether to forward it: not
// when the line wrote it itself or the kernel cut it short.
func (b *rxBatch) frame(i int) (f []byte, outgoing, truncated bool) {
	m := &b.msgs[i]
	return b.bufs[i][:m.Len], b.addrs[i].Pkttype == unix.PACKET_OUTGOING, m.Hdr.Flags&unix.MSG_TRUNC != 0
}

// txBatch sends frames held in a queue in one sendmmsg.
type txBatch struct {
	msgs []unix.Mmsghdr
	iovs []unix.Iovec
	n    int
}

func newTxBatch() *txBatch {
	b := &txBatch{msgs: make([]unix.Mmsghdr, batchSize), iovs: make([]unix.Iovec, batchSize)}
	for i := range b.msgs {
		b.msgs[i].Hdr.Iov = &b.iovs[i]
		b.msgs[i].Hdr.SetIovlen(1)
	}
	return b
}

func (b *txBatch) add(frame []byte) {
	b.iovs[b.n].Base = &frame[0]
	b.iovs[b.n].SetLen(len(frame))
	b.n++
}

// send writes the batch; failed counts the frames the kernel refused
// (each is skipped, as a NIC drops a frame it cannot send).
func (b *txBatch) send(fd int) (failed int, err error) {
	for at := 0; at < b.n; {
		n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[at])), uintptr(b.n-at), 0, 0, 0)
		switch {
		case errno == unix.EINTR:
		case errno == unix.EMSGSIZE || errno == unix.ENOBUFS || errno == unix.EINVAL:
			failed++ // this frame; go on with the next
			at++
		case errno != 0:
			b.clear()
			return failed, fmt.Errorf("sendmmsg: %w", errno)
		case n == 0:
			b.clear()
			return failed, errors.New("sendmmsg sent nothing")
		default:
			at += int(n)
		}
	}
	b.clear()
	return failed, nil
}

// clear drops the batch's references into the queue.
func (b *txBatch) clear() {
	for i := range b.n {
		b.iovs[i].Base = nil
	}
	b.n = 0
}
