package router

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// checksum is the IPv4 header checksum computed whole.
func checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i < len(h); i += 2 {
		if i != 10 {
			sum += uint32(binary.BigEndian.Uint16(h[i:]))
		}
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// TestDecrementTTLKeepsTheChecksumValid: the patched checksum verifies
// as one computed whole, for any header; TTL 1 and 0 stop the packet.
func TestDecrementTTLKeepsTheChecksumValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := make([]byte, 20)
	for i := range 100000 {
		for j := range h {
			h[j] = byte(r.UintN(256))
		}
		h[0] = 0x45
		if i%7 == 0 {
			h[8] = 2 // the last hop that may relay
		}
		binary.BigEndian.PutUint16(h[10:], checksum(h))
		ttl := h[8]
		ok := decrementTTL(h)
		if ttl <= 1 {
			if ok || h[8] != ttl {
				t.Fatalf("TTL %d relayed (now %d)", ttl, h[8])
			}
			continue
		}
		if !ok || h[8] != ttl-1 {
			t.Fatalf("TTL %d: relayed %v, now %d", ttl, ok, h[8])
		}
		// A valid header sums, checksum included, to 0xffff (or its
		// other zero).
		var sum uint32
		for k := 0; k < 20; k += 2 {
			sum += uint32(binary.BigEndian.Uint16(h[k:]))
		}
		for sum > 0xffff {
			sum = sum&0xffff + sum>>16
		}
		if sum != 0xffff && sum != 0 {
			t.Fatalf("header %x: checksum no longer verifies (sum %#x)", h, sum)
		}
	}
}

// TestPeerForRelays: a packet for a peer's subnet goes to that peer, one
// for no peer's (this host's own) to the TUN.
func TestPeerForRelays(t *testing.T) {
	c := Config{Kind: KindUDP, TUN: "t", MTU: 1472, Listen: "198.18.0.2:8285", Peers: []Peer{
		{Subnet: "198.19.161.0/24", Endpoint: "198.18.0.1:8285"},
		{Subnet: "198.19.163.0/24", Endpoint: "198.18.0.3:8285"},
		{Subnet: "198.19.164.0/24", Endpoint: "198.18.0.3:8285"},
	}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var rs []peerRoute
	for _, p := range c.Peers {
		rs = append(rs, peerRoute{prefix: mustPrefix(p.Subnet)})
	}
	pkt := make([]byte, 20)
	pkt[0] = 0x45
	for dst, want := range map[[4]byte]int{{198, 19, 164, 2}: 2, {198, 19, 161, 2}: 0, {198, 19, 162, 2}: -1} {
		copy(pkt[16:], dst[:])
		if got := peerFor(rs, pkt); got != want {
			t.Errorf("%v: peer %d, want %d", dst, got, want)
		}
	}
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s).Masked() }
