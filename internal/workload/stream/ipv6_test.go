package stream

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestIPv6Loopback: a server listening as a lab with IPv6 has it ([::])
// serves a client dialling IPv6 (::1), over TCP and UDP.
func TestIPv6Loopback(t *testing.T) {
	s, err := Listen("[::]:0", 1, testLog{t})
	if err != nil {
		t.Skipf("no IPv6 here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	addr := net.JoinHostPort("::1", portOf(t, s.Addr()))
	for _, proto := range []string{"tcp", "udp"} {
		cfg := Config{Addr: addr, Protocol: proto, Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond, Parallel: 1}
		if proto == "udp" {
			cfg.Rate = 10_000_000
		}
		res, err := Run(context.Background(), cfg, func(Interval) {})
		if err != nil {
			t.Fatalf("%s over IPv6: %v", proto, err)
		}
		if res.ReceiverBytes == 0 {
			t.Errorf("%s over IPv6: nothing received: %+v", proto, res)
		}
	}
}

func portOf(t *testing.T, a net.Addr) string {
	t.Helper()
	_, p, err := net.SplitHostPort(a.String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
