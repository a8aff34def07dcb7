package rr

import (
	"context"
	"net"
	"testing"
)

// TestNoAllocsPerTransaction: the client's hot path allocates nothing, so
// no garbage collection ever has to stop a worker blocked in a raw call.
func TestNoAllocsPerTransaction(t *testing.T) {
	addr := startServer(t)
	r := &run{cfg: Config{Addr: addr, Mode: ModeTCP, RequestSize: 14, ResponseSize: 14}.withDefaults()}
	r.dial = (&net.Dialer{}).DialContext
	s, err := r.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if !s.detached() {
		t.Fatal("a TCP connection was not detached from the netpoller")
	}
	h := hotIO{fd: uintptr(s.fd)}
	buf := make([]byte, 14)
	stop := func() bool { return false }
	allocs := testing.AllocsPerRun(1000, func() {
		if e := h.writeN(14, stop); e != 0 {
			t.Fatal(e)
		}
		if e := h.readN(buf, 14, stop); e != 0 {
			t.Fatal(e)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per transaction", allocs)
	}
}
