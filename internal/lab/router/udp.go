package router

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"

	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/tun"
)

// headroom leaves room before each packet for the TUN's virtio header.
const headroom = 16

// runUDP is the udp kind: TUN to peers and peers to TUN. The UDP side is
// wireguard-go's standard bind, so that the clear and the encrypted
// overlay batch alike (sendmmsg/recvmmsg with UDP GSO and GRO) and differ
// by the encryption alone.
func runUDP(ctx context.Context, c Config, cnt *Counters, logf func(string, ...any)) error {
	dev, err := tun.CreateTUN(c.TUN, c.MTU)
	if err != nil {
		return fmt.Errorf("create TUN %s: %w", c.TUN, err)
	}
	defer dev.Close()
	bind := conn.NewStdNetBind()
	ap := netip.MustParseAddrPort(c.Listen)
	recvs, _, err := bind.Open(ap.Port())
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", ap.Port(), err)
	}
	defer bind.Close()
	var rs []peerRoute
	for _, p := range c.Peers {
		ep, err := bind.ParseEndpoint(p.Endpoint)
		if err != nil {
			return fmt.Errorf("peer %s: %w", p.Endpoint, err)
		}
		rs = append(rs, peerRoute{prefix: netip.MustParsePrefix(p.Subnet).Masked(), ep: ep})
	}
	logf("overlay router (udp): %s MTU %d, port %d, %d peers, batches of %d", c.TUN, c.MTU, ap.Port(), len(c.Peers), dev.BatchSize())

	errc := make(chan error, 1+len(recvs))
	go func() { errc <- tunToPeers(dev, bind, rs, cnt) }()
	var writeMu sync.Mutex // the receive functions share the TUN
	for _, recv := range recvs {
		go func() { errc <- peersToTUN(dev, &writeMu, recv, bind.BatchSize(), cnt, relay{bind: bind, rs: rs}) }()
	}
	select {
	case <-ctx.Done():
		err = nil
	case err = <-errc:
		if errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) {
			err = nil
		}
	}
	logf("overlay router: %s", cnt)
	return err
}

// peerRoute maps a peer's container subnet to its router.
type peerRoute struct {
	prefix netip.Prefix
	ep     conn.Endpoint
}

// peerFor finds the peer owning an IPv4 packet's destination (-1: none).
func peerFor(rs []peerRoute, pkt []byte) int {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return -1
	}
	dst := netip.AddrFrom4([4]byte(pkt[16:20]))
	for i, r := range rs {
		if r.prefix.Contains(dst) {
			return i
		}
	}
	return -1
}

// tunToPeers reads batches from the TUN (a TSO super-packet arrives split
// into MTU-sized packets) and sends each peer its packets in one call.
func tunToPeers(dev tun.Device, bind conn.Bind, rs []peerRoute, cnt *Counters) error {
	n := dev.BatchSize()
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, headroom+65535)
	}
	sizes := make([]int, n)
	perPeer := make([][][]byte, len(rs))
	for {
		k, err := dev.Read(bufs, sizes, headroom)
		// Too many segments: what fitted came, the rest is dropped, as the
		// kernel drops what overflows a queue.
		if err != nil && !errors.Is(err, tun.ErrTooManySegments) {
			return fmt.Errorf("read TUN: %w", err)
		}
		for i := range perPeer {
			perPeer[i] = perPeer[i][:0]
		}
		for i := 0; i < max(k, 0); i++ {
			pkt := bufs[i][headroom : headroom+sizes[i]]
			cnt.FromTUN.Add(1)
			p := peerFor(rs, pkt)
			if p < 0 {
				cnt.NoRoute.Add(1)
				continue
			}
			perPeer[p] = append(perPeer[p], pkt)
		}
		for p, pkts := range perPeer {
			for len(pkts) > 0 {
				chunk := pkts[:min(len(pkts), bind.BatchSize())]
				pkts = pkts[len(chunk):]
				if err := bind.Send(chunk, rs[p].ep); err != nil {
					if errors.Is(err, net.ErrClosed) {
						return err
					}
					continue // a full socket buffer drops them, as a NIC would
				}
				cnt.ToPeers.Add(uint64(len(chunk)))
			}
		}
	}
}

// relay is where peersToTUN sends on what is not for this host: the
// peers' routes and the bind to send with (its Send may be called from
// several goroutines, as wireguard-go's peers do).
type relay struct {
	bind conn.Bind
	rs   []peerRoute
}

// peersToTUN receives batches of datagrams (GRO splits them again) and
// writes their packets to the TUN, which coalesces what it can. A packet
// for a peer's subnet rather than this host's is relayed to that peer in
// user space, its TTL decremented as a router does: on a chain of hosts
// the peers behind a neighbour are reached through it (Weave's sleeve
// routing through intermediate peers).
func peersToTUN(dev tun.Device, mu *sync.Mutex, recv conn.ReceiveFunc, batch int, cnt *Counters, rl relay) error {
	bufs := make([][]byte, batch)
	views := make([][]byte, batch)
	for i := range bufs {
		// Full-size: with GRO the kernel hands over several datagrams in
		// one buffer, which the bind then splits across the others.
		bufs[i] = make([]byte, headroom+65535)
		views[i] = bufs[i][headroom:]
	}
	sizes := make([]int, batch)
	eps := make([]conn.Endpoint, batch)
	out := make([][]byte, 0, batch)
	onward := make([][][]byte, len(rl.rs))
	for {
		k, err := recv(views, sizes, eps)
		if err != nil {
			return fmt.Errorf("receive: %w", err)
		}
		out = out[:0]
		for i := range onward {
			onward[i] = onward[i][:0]
		}
		for i := 0; i < k; i++ {
			cnt.FromPeer.Add(1)
			if sizes[i] < 20 {
				continue
			}
			pkt := bufs[i][headroom : headroom+sizes[i]]
			p := peerFor(rl.rs, pkt)
			if p < 0 {
				out = append(out, bufs[i][:headroom+sizes[i]])
				continue
			}
			if !decrementTTL(pkt) {
				cnt.TTLExpired.Add(1)
				continue
			}
			onward[p] = append(onward[p], pkt)
		}
		if err := rl.send(onward, cnt); err != nil {
			return err
		}
		if len(out) == 0 {
			continue
		}
		mu.Lock()
		_, err = dev.Write(out, headroom)
		mu.Unlock()
		if errors.Is(err, os.ErrClosed) {
			return err
		}
		if err == nil {
			cnt.ToTUN.Add(uint64(len(out)))
		}
	}
}

// send relays each peer its packets, in batches the bind takes; a full
// socket buffer drops them, as a NIC would.
func (rl relay) send(perPeer [][][]byte, cnt *Counters) error {
	for p, pkts := range perPeer {
		if len(pkts) == 0 {
			continue
		}
		for len(pkts) > 0 {
			chunk := pkts[:min(len(pkts), rl.bind.BatchSize())]
			pkts = pkts[len(chunk):]
			err := rl.bind.Send(chunk, rl.rs[p].ep)
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			if err == nil {
				cnt.Relayed.Add(uint64(len(chunk)))
			}
		}
	}
	return nil
}

// decrementTTL lowers an IPv4 packet's TTL by one and patches its header
// checksum (RFC 1624, as the kernel's ip_decrease_ttl); false when the
// packet must not go on (TTL 1 or 0: a loop, or a path too long).
func decrementTTL(pkt []byte) bool {
	if pkt[8] <= 1 {
		return false
	}
	pkt[8]--
	c := uint32(pkt[10])<<8 | uint32(pkt[11])
	c += 0x0100
	if c >= 0xffff {
		c++
	}
	pkt[10], pkt[11] = byte(c>>8), byte(c)
	return true
}
