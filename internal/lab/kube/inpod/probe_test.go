package inpod

import (
	"bufio"
	"context"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestProbeSeesAListenerComeAndGo: the probe says pass while a listener
// accepts on loopback, block once it is gone, pass when it is back.
func TestProbeSeesAListenerComeAndGo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	lctx, stopListen := context.WithCancel(context.Background())
	listening := make(chan error, 1)
	go func() { listening <- Listen(lctx, port) }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Probe(ctx, "127.0.0.1:"+strconv.Itoa(port), 5*time.Millisecond, 100*time.Millisecond, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	next := func(want string) {
		t.Helper()
		for sc.Scan() {
			state, ago, err := ParseProbe(sc.Text())
			if err != nil {
				t.Fatal(err)
			}
			if ago < 0 || ago > time.Second {
				t.Errorf("line %q: dial began %s before it", sc.Text(), ago)
			}
			if state == want {
				return
			}
		}
		t.Fatalf("probe ended before %s", want)
	}
	// The listener may not be up at the first dial: wait for pass.
	next(ProbePass)
	stopListen()
	if err := <-listening; err != nil {
		t.Fatalf("Listen: %v", err)
	}
	next(ProbeBlock)
	lctx, stopListen = context.WithCancel(context.Background())
	defer stopListen()
	go func() { listening <- Listen(lctx, port) }()
	next(ProbePass)
	cancel()
	for sc.Scan() {
	}
	if err := <-done; err != nil {
		t.Errorf("Probe: %v", err)
	}
}

func TestParseProbe(t *testing.T) {
	for _, tc := range []struct {
		line  string
		state string
		ok    bool
	}{
		{"pass 1200", ProbePass, true},
		{"block 200000000", ProbeBlock, true},
		{"block -1", "", false},
		{"maybe 3", "", false},
		{"pass", "", false},
		{"pass 1 2", "", false},
		{"", "", false},
	} {
		state, _, err := ParseProbe(tc.line)
		if (err == nil) != tc.ok || state != tc.state {
			t.Errorf("ParseProbe(%q) = %q, %v", tc.line, state, err)
		}
	}
}

func FuzzParseProbe(f *testing.F) {
	f.Add("pass 12")
	f.Add("block 9223372036854775807")
	f.Fuzz(func(t *testing.T, line string) {
		state, ago, err := ParseProbe(line)
		if err == nil && (ago < 0 || (state != ProbePass && state != ProbeBlock)) {
			t.Errorf("ParseProbe(%q) = %q, %s", line, state, ago)
		}
	})
}
