package serverkit

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestClip(t *testing.T) {
	long := strings.Repeat("x", 65)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"start", "start"},
		{long[:64], long[:64]},
		{long, long[:64] + "..."},
	} {
		if got := Clip(tc.in); got != tc.want {
			t.Errorf("Clip(%d bytes) = %q, want %q", len(tc.in), got, tc.want)
		}
	}
}

func TestCheckTests(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, ""}, {MaxTests, ""},
		{0, "--tests 0: must be in [1, 1024]"},
		{-1, "--tests -1: must be in [1, 1024]"},
		{MaxTests + 1, "--tests 1025: must be in [1, 1024]"},
	} {
		err := CheckTests(tc.n)
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("CheckTests(%d) = %v, want %q", tc.n, err, tc.want)
		}
	}
}

// TestGate: a full gate refuses, logs once however many it refuses in a
// second, and admits again after a Leave.
func TestGate(t *testing.T) {
	g := NewGate(2)
	if !g.Enter() || !g.Enter() {
		t.Fatal("a gate of 2 refused one of 2 connections")
	}
	if g.Enter() {
		t.Fatal("a full gate admitted a third")
	}
	var lines []string
	logf := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	g.Refuse(logf, "connections")
	g.Refuse(logf, "connections")
	if want := []string{"too many connections (2 at once): 1 refused so far"}; fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("logged %q, want %q", lines, want)
	}
	g.Leave()
	if !g.Enter() {
		t.Error("a gate with room refused")
	}
}

// TestSlots: with every slot taken a request is busy at once, unless a
// test is answering: then it gets that test's slot when it is released.
func TestSlots(t *testing.T) {
	ctx := context.Background()
	s := NewSlots(1)
	if !s.Take(ctx, 0) {
		t.Fatal("a free slot refused")
	}
	if s.Take(ctx, time.Hour) {
		t.Fatal("a slot taken twice")
	}
	s.Answering()
	got := make(chan bool)
	go func() { got <- s.Take(ctx, time.Minute) }()
	s.Release(true)
	if !<-got {
		t.Fatal("a request waiting for an answering test's slot was refused")
	}
	s.Answering()
	if s.Take(ctx, time.Millisecond) {
		t.Fatal("a slot taken twice while answering")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if s.Take(cctx, time.Hour) {
		t.Fatal("a slot taken after the server stopped")
	}
	s.Release(true)
}

// TestProcs: GOMAXPROCS follows the Ps lent, and Start's restore puts the
// base back.
func TestProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	p := Procs{Want: func(held, base int) int { return max(held+1, base) }}
	restore := p.Start()
	if p.Base() != 1 {
		t.Fatalf("base %d, want 1", p.Base())
	}
	p.Lend(1)
	p.Lend(1)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("two Ps lent: GOMAXPROCS %d, want 3", got)
	}
	p.Lend(-1)
	p.Lend(-1)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("all given back: GOMAXPROCS %d, want 1", got)
	}
	p.Lend(1)
	restore()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("restored: GOMAXPROCS %d, want 1", got)
	}
}

// TestListenPair: both sockets get one port number, the free one for port
// 0; a port taken over UDP is refused in words naming it.
func TestListenPair(t *testing.T) {
	ln, uc, err := ListenPair("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	defer uc.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if got := uc.LocalAddr().(*net.UDPAddr).Port; got != port {
		t.Fatalf("udp port %d, tcp %d", got, port)
	}
	ln.Close() // TCP free, UDP still taken
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if _, _, err := ListenPair(addr); err == nil || !strings.HasPrefix(err.Error(), "listen on "+addr+"/udp: ") {
		t.Errorf("UDP port taken: %v, want it named", err)
	}
	if _, _, err := ListenPair("no-port"); err == nil || !strings.HasPrefix(err.Error(), `listen on "no-port": `) {
		t.Errorf("no port: %v", err)
	}
}

func TestWithPort(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1": "10.0.0.1:5202", "10.0.0.1:80": "10.0.0.1:80", "host": "host:5202", "h:1": "h:1",
		"::1": "[::1]:5202", "[::1]": "[::1]:5202", "[::1]:7": "[::1]:7", "": "",
	} {
		if got := WithPort(in, 5202); got != want {
			t.Errorf("WithPort(%q, 5202) = %q, want %q", in, got, want)
		}
	}
}

// TestReplier: an answer is one JSON line; a closed connection says so.
func TestReplier(t *testing.T) {
	a, b := net.Pipe()
	reply := Replier[map[string]int](a)
	got := make(chan string)
	go func() {
		buf := make([]byte, 64)
		n, _ := b.Read(buf)
		got <- string(buf[:n])
	}()
	if !reply(map[string]int{"test_id": 7}) {
		t.Fatal("reply failed")
	}
	if s := <-got; s != "{\"test_id\":7}\n" {
		t.Errorf("wrote %q", s)
	}
	b.Close()
	if reply(map[string]int{}) {
		t.Error("a reply on a closed connection succeeded")
	}
}

func TestOrDefault(t *testing.T) {
	for _, tc := range []struct{ v, want time.Duration }{{0, time.Second}, {-1, time.Second}, {time.Millisecond, time.Millisecond}} {
		if got := OrDefault(tc.v, time.Second); got != tc.want {
			t.Errorf("OrDefault(%s, 1s) = %s, want %s", tc.v, got, tc.want)
		}
	}
	if got := OrDefault(0, 64); got != 64 {
		t.Errorf("OrDefault(0, 64) = %d", got)
	}
}
