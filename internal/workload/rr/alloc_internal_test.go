package rr

import (
	"context"
	"net"
	"testing"
)

// TestNoAllocsPerTransaction: the client's hot path allocates nothing.
func TestNoAllocsPerTransaction(t *testing.T) {
	addr := startServer(t)
	r := &run{cfg: Config{Addr: addr, Mode: ModeTCP, RequestSize: 14, ResponseSize: 14}.withDefaults()}
	r.dial = (&net.Dialer{}).DialContext
	s, err := r.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.c.Close()
	buf := make([]byte, 14)
	stop := func() bool { return false }
	allocs := testing.AllocsPerRun(1000, func() {
		if err := s.writeN(14, stop); err != nil {
			t.Fatal(err)
		}
		if err := s.readN(buf, 14, stop); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per transaction", allocs)
	}
}
