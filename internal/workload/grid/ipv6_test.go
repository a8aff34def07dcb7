package grid

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

// TestGridOverIPv6: a member bound to ::1 (Olric and its memberlist
// gossip) serves a client that dials IPv6.
func TestGridOverIPv6(t *testing.T) {
	if c, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 here: %v", err)
	} else {
		c.Close()
	}
	addr := net.JoinHostPort("::1", strconv.Itoa(freePorts(t)))
	key, err := newGossipKey()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, addr, key, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	waitPing(t, addr, 10*time.Second)
	store, closeFn, err := Dial(context.Background(), addr, time.Second, 10*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	res, err := Run(context.Background(), Config{Addr: addr, Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond, ValueSize: 100}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Puts == 0 || res.Failures() != 0 {
		t.Errorf("over IPv6: %d puts, %d failures", res.Puts, res.Failures())
	}
}

// TestBindIPFamily: an unspecified IPv6 listen ([::], as on a lab with
// IPv6) binds an address of IPv6 when the host has one, an IPv4 spelling
// one of IPv4; each falls back to the other family, then loopback.
func TestBindIPFamily(t *testing.T) {
	has := map[bool]bool{}
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(p.IP); ok && ip.Unmap().IsGlobalUnicast() {
					has[ip.Unmap().Is6()] = true
				}
			}
		}
	}
	for _, tc := range []struct {
		host  string
		want6 bool
	}{{"::", true}, {"0.0.0.0", false}, {"", false}} {
		ip, err := bindIP(tc.host)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case has[tc.want6] && ip.Is6() != tc.want6:
			t.Errorf("%q: %s, want one of IPv6 %v", tc.host, ip, tc.want6)
		case !has[tc.want6] && has[!tc.want6] && ip.Is6() == tc.want6:
			t.Errorf("%q: %s, want the other family's", tc.host, ip)
		case !has[true] && !has[false] && !ip.IsLoopback():
			t.Errorf("%q: %s, want loopback", tc.host, ip)
		}
	}
}
