package rr

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestIPv6Loopback: a server listening as a lab with IPv6 has it ([::])
// answers tcp, udp and crr clients dialling IPv6 (::1).
func TestIPv6Loopback(t *testing.T) {
	s, err := Listen("[::]:0")
	if err != nil {
		t.Skipf("no IPv6 here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	_, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("::1", port)
	for _, proto := range []string{"tcp", "udp", "crr"} {
		res, err := Run(context.Background(), Config{Addr: addr, Protocol: proto, Duration: 300 * time.Millisecond}, nil)
		if err != nil {
			t.Fatalf("%s over IPv6: %v", proto, err)
		}
		if res.Transactions == 0 {
			t.Errorf("%s over IPv6: no transactions", proto)
		}
	}
}
