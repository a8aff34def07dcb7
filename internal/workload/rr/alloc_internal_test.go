package rr

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// TestNoAllocsPerTransaction: the client's hot path allocates nothing, so
// no garbage collection ever has to stop a worker blocked in a raw call.
func TestNoAllocsPerTransaction(t *testing.T) {
	addr := serverProcess(t)
	r := &run{cfg: Config{Addr: addr, Protocol: ProtocolTCP, RequestSize: 14, ResponseSize: 14}.withDefaults()}
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

// TestNoAllocsPerCRRTransaction: neither does a crr transaction's
// connect, exchange and close; the worker's sock is reused.
func TestNoAllocsPerCRRTransaction(t *testing.T) {
	ap, err := netip.ParseAddrPort(serverProcess(t))
	if err != nil {
		t.Fatal(err)
	}
	c := newCRRClient(ap, 14, 14)
	w := &worker{}
	stop := func() bool { return false }
	allocs := testing.AllocsPerRun(200, func() {
		if e := c.open(w, stop); e != 0 {
			t.Fatal(e)
		}
		if e := c.exchange(stop); e != 0 {
			t.Fatal(e)
		}
		c.close(&w.tcp)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per crr transaction", allocs)
	}
	// Each close read its connection's TCP_INFO (AllocsPerRun runs once
	// more, to warm up).
	if got := w.tcp.Stats(); got == nil || got.Connections != 201 || got.RTTUS <= 0 || got.CwndMin < 1 {
		t.Errorf("TCP_INFO of 201 crr connections: %+v", got)
	}
}

// BenchmarkCRRTransaction is one crr transaction of the hot path:
// connect, request, response, the server's FIN and close, against a
// server in another process; with and without reading the connection's
// TCP_INFO before the close, which is what a measured transaction adds.
func BenchmarkCRRTransaction(b *testing.B) {
	ap, err := netip.ParseAddrPort(serverProcess(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, read := range []bool{false, true} {
		name := "without_tcp_info"
		if read {
			name = "with_tcp_info"
		}
		b.Run(name, func(b *testing.B) {
			c := newCRRClient(ap, 14, 14)
			w := &worker{}
			acc := &w.tcp
			if !read {
				acc = nil
			}
			stop := func() bool { return false }
			b.ReportAllocs()
			for b.Loop() {
				if e := c.open(w, stop); e != 0 {
					b.Fatal(e)
				}
				if e := c.exchange(stop); e != 0 {
					b.Fatal(e)
				}
				c.close(acc)
			}
		})
	}
}

// TestCRRClientStopped: a stopped worker's next open closes what it
// connected and says so.
func TestCRRClientStopped(t *testing.T) {
	ap, err := netip.ParseAddrPort(startServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c := newCRRClient(ap, 14, 14)
	w := &worker{}
	if !w.setSock(c.s) {
		t.Fatal("setSock on a fresh worker")
	}
	w.stop()
	if e := c.open(w, func() bool { return false }); e != errStopped {
		t.Fatalf("open after stop: %v, want %v", e, errStopped)
	}
	if !c.s.closed {
		t.Error("the sock is open after a stopped open")
	}
}

// serverProcess starts a Server in a child process (this test binary,
// running TestServerProcess) and returns its address. AllocsPerRun runs
// with one P, which the client's raw calls hold while they wait: a Server
// in this process could not answer until sysmon preempted the client
// (10 ms and more a transaction).
func serverProcess(t testing.TB) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerProcess$")
	cmd.Env = append(os.Environ(), "CNPERF_RR_SERVER_PROCESS=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the child stops when its stdin closes
		if err := cmd.Wait(); err != nil {
			t.Errorf("server process: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("server process: %v", err)
	}
	return strings.TrimSpace(line)
}

// TestServerProcess is serverProcess's child: it serves until its stdin
// closes.
func TestServerProcess(t *testing.T) {
	if os.Getenv("CNPERF_RR_SERVER_PROCESS") != "1" {
		t.Skip("the child of serverProcess")
	}
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(s.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := s.Serve(ctx, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkTCPInfoRead is what crr adds to a transaction: one raw
// getsockopt(TCP_INFO) into the worker's buffer.
func BenchmarkTCPInfoRead(b *testing.B) {
	ap, err := netip.ParseAddrPort(serverProcess(b))
	if err != nil {
		b.Fatal(err)
	}
	c := newCRRClient(ap, 14, 14)
	w := &worker{}
	if e := c.open(w, func() bool { return false }); e != 0 {
		b.Fatal(e)
	}
	defer c.s.close()
	var acc tcpinfo.Acc
	b.ReportAllocs()
	for b.Loop() {
		if !acc.ReadFd(c.s.fd) {
			b.Fatal("no TCP_INFO")
		}
	}
}
