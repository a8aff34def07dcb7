package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// heapInuse is the heap in use after a collection.
func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// TestAnswerBounded sends the amplifying request found once: a UDP test of many
// 10 ms intervals on many streams, then done at once. What the server
// allocates and answers stays within maxBinCells records.
func TestAnswerBounded(t *testing.T) {
	addr := startServer(t)
	for _, parallel := range []int{16, descriptors.StreamMaxParallel} {
		var cookie [cookieLen]byte
		cookie[0] = byte(parallel)
		req := testMessage(Config{Protocol: "udp", Duration: 999 * time.Second, Interval: workload.MinInterval,
			Parallel: parallel, Length: DefaultUDPLength, Rate: DefaultUDPRate}, cookie)
		raw, _ := json.Marshal(req)
		before, alloc0 := heapInuse(), totalAlloc()
		c, dec, r := rawControl(t, addr, req)
		if r.Type != "accept" {
			t.Fatalf("%d streams: reply %+v", parallel, r)
		}
		enc := json.NewEncoder(c)
		_ = enc.Encode(message{Type: "start"})
		if err := dec.Decode(&r); err != nil || r.Type != "started" {
			t.Fatalf("%d streams: reply %+v, %v", parallel, r, err)
		}
		_ = enc.Encode(message{Type: "done"}) // no elapsed time: every bin
		// Count the answer's bytes without decoding them.
		n, _ := io.Copy(io.Discard, io.MultiReader(dec.Buffered(), c))
		c.Close()
		alloc := totalAlloc() - alloc0
		after := heapInuse()
		t.Logf("%d streams: %d-byte request, %d-byte answer; allocated %.1f MB, heap in use %.1f -> %.1f MB",
			parallel, len(raw), n, float64(alloc)/1e6, float64(before)/1e6, float64(after)/1e6)
		if n > 4<<20 {
			t.Errorf("%d streams: %d-byte answer", parallel, n)
		}
		if alloc > 64<<20 {
			t.Errorf("%d streams: the test allocated %d bytes", parallel, alloc)
		}
		if after > before+16<<20 {
			t.Errorf("%d streams: heap in use grew from %d to %d bytes", parallel, before, after)
		}
	}
	// The server still serves.
	if _, err := Run(context.Background(), Config{Addr: addr, Duration: 200 * time.Millisecond}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestServerInterval(t *testing.T) {
	ms, s := time.Millisecond, time.Second
	for _, tc := range []struct {
		omit, dur, iv time.Duration
		parallel      int
		want          time.Duration
	}{
		{0, 10 * s, s, 1, s},
		{0, 999 * s, 10 * ms, 16, 250 * ms}, // 99,900 intervals in 4096 bins
		{0, 999 * s, 10 * ms, 128, 1960 * ms},
		{2 * s, 8 * s, 10 * ms, 128, 20 * ms},
		{0, 24 * time.Hour, s, 1, 2 * s},
	} {
		c := Config{Omit: tc.omit, Duration: tc.dur, Interval: tc.iv, Parallel: tc.parallel}
		got := serverInterval(c, maxBinCells)
		bins := countBins(tc.omit, tc.dur, got)
		if got != tc.want || bins*int64(tc.parallel) > maxBinCells || got%tc.iv != 0 {
			t.Errorf("serverInterval(%+v) = %s (%d bins per stream), want %s", c, got, bins, tc.want)
		}
		if n := int64(len(boundaries(tc.omit, tc.dur, got)) - 1); n != bins {
			t.Errorf("countBins = %d, boundaries has %d", bins, n)
		}
	}
}

// TestCoarseResults: intervals the server coarsened reach the client with
// the warm-up told apart by the server's own edges.
func TestCoarseResults(t *testing.T) {
	cfg := Config{Protocol: "tcp", Omit: 2 * time.Second, Duration: 8 * time.Second, Interval: 10 * time.Millisecond, Parallel: 128}.withDefaults()
	tt := newTest(cfg, [cookieLen]byte{}, maxBinCells)
	for _, r := range tt.recv {
		for k := range r.bytes {
			r.bytes[k] = 1
		}
	}
	m := tt.results(0, nil)
	var ivs []Interval
	r := &runner{cfg: cfg, emit: func(iv Interval) { ivs = append(ivs, iv) }}
	var res Result
	if err := r.receiverSide(m, &res); err != nil {
		t.Fatal(err)
	}
	nb := len(m.Edges) - 1
	if nb != 500 {
		t.Fatalf("%d bins, want 500 (20 ms)", nb)
	}
	if res.ReceiverBytes != 400*128 {
		t.Errorf("receiver bytes %d, want %d (the 400 measured bins)", res.ReceiverBytes, 400*128)
	}
	omitted := 0
	for _, iv := range ivs {
		if iv.Stream == StreamSum && iv.Omitted {
			omitted++
			if iv.End > 2.0001 {
				t.Errorf("omitted interval %v-%v after the warm-up", iv.Start, iv.End)
			}
		}
	}
	if omitted != 100 {
		t.Errorf("%d omitted intervals, want 100", omitted)
	}
}

// TestConnectionCap: idle connections beyond maxHandlers are closed at
// once, the server's memory stays bounded, and it serves a test when they
// are gone.
func TestConnectionCap(t *testing.T) {
	addr := startServer(t)
	before := heapInuse()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range maxHandlers {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(`{"type":"test",`)) // a request that never ends
		conns = append(conns, c)
	}
	// The server is reading them all: the next one is closed at once.
	testutil.AwaitRefused(t, addr)
	grown := int64(heapInuse()) - int64(before)
	t.Logf("%d pending connections: heap in use %+.1f MB", maxHandlers, float64(grown)/1e6)
	if grown > 32<<20 {
		t.Errorf("heap grew by %d bytes", grown)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	var err error
	for try := 0; try < 50; try++ {
		if _, err = Run(context.Background(), Config{Addr: addr, Duration: 200 * time.Millisecond}, nil); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond) // the server is still closing them
	}
	t.Fatal(err)
}

// TestLongControlMessage: a control connection sending more than
// maxControlMessage is cut off with an error.
func TestLongControlMessage(t *testing.T) {
	addr := startServer(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		_, _ = c.Write([]byte(`{"type":"test","x":"`))
		_, _ = c.Write(bytes.Repeat([]byte("a"), 4*maxControlMessage))
	}()
	var r message
	if err := json.NewDecoder(c).Decode(&r); err != nil || r.Type != "error" {
		t.Fatalf("reply %+v, %v", r, err)
	}
}
