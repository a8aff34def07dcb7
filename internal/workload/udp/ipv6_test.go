package udp

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// TestIPv6Loopback: a listener on [::] (as on a lab with IPv6) serves
// jitter and datagram clients dialling IPv6 (::1), and the datagram's
// default size leaves room for IPv6's larger header.
func TestIPv6Loopback(t *testing.T) {
	ln, pc, err := serverkit.ListenPair("[::]:0")
	if err != nil {
		t.Skipf("no IPv6 here: %v", err)
	}
	s := &Server{Grace: 100 * time.Millisecond, IdleTimeout: 2 * time.Second, Logf: t.Logf}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, pc, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	addr := net.JoinHostPort("::1", port)
	j, err := RunJitter(context.Background(), JitterConfig{Addr: addr, Rate: 1_000_000, Size: 1200, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("jitter over IPv6: %v", err)
	}
	if j.Total.Packets == 0 {
		t.Errorf("jitter over IPv6: no packets: %+v", j.Total)
	}
	d, err := RunDatagram(context.Background(), DatagramConfig{Addr: addr, Rate: 1_000_000, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("datagram over IPv6: %v", err)
	}
	if d.Total.Received == 0 {
		t.Errorf("datagram over IPv6: nothing received: %+v", d.Total)
	}
	// Loopback's MTU is 65536: the default size is capped by the largest
	// payload, so check the fit on a 1500-byte path by arithmetic instead.
	if got := DefaultPacketSize(1500-20) + 48; got > 1500 {
		t.Errorf("a default-sized datagram over IPv6 is %d bytes on a 1500-byte path", got)
	}
}
