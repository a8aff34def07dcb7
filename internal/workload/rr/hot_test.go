package rr

import (
	"context"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0\n", 1, true},
		{"0-1\n", 2, true},
		{"0-3,8,10-11", 7, true},
		{"", 0, false},
		{"3-1", 0, false},
		{"a-b", 0, false},
		{"-1", 0, false},
	} {
		n, ok := descriptors.ParseCPUList(tc.in)
		if n != tc.want || ok != tc.ok {
			t.Errorf("descriptors.ParseCPUList(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.want, tc.ok)
		}
	}
}

func TestBusyPollFits(t *testing.T) {
	for _, tc := range []struct {
		workers, cpus int
		refused       string
	}{
		{1, 1, "has 1 CPU"},
		{1, 2, ""},
		{2, 2, "all 2 CPUs"},
		{3, 8, ""},
	} {
		err := descriptors.BusyPollFits(tc.workers, tc.cpus)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%d workers on %d CPUs: %v", tc.workers, tc.cpus, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%d workers on %d CPUs: %v; want it refused (%q)", tc.workers, tc.cpus, err, tc.refused)
		}
	}
	err := Config{Addr: "198.18.0.1", Protocol: ProtocolCRR, Duration: time.Second, BusyPoll: true}.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "--busy-poll:") {
		t.Errorf("busy polling crr: %v; want it refused", err)
	}
}

// TestHotPathIO: kernel sockets take the hot path, blocking or busy
// polling, and the result says which; a conn that is no kernel socket
// stays on the netpoller.
func TestHotPathIO(t *testing.T) {
	addr := startServer(t)
	type plainConn struct{ net.Conn } // hides the socket: not detachable
	plain := func(ctx context.Context, network, a string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, a)
		return plainConn{c}, err
	}
	type ioCase struct {
		mode string
		busy bool
		dial func(context.Context, string, string) (net.Conn, error)
		want string
	}
	cases := []ioCase{
		{ProtocolTCP, false, nil, "blocking"},
		{ProtocolUDP, false, nil, "blocking"},
		{ProtocolCRR, false, nil, "blocking"},
		{ProtocolTCP, false, plain, "netpoller"},
		{ProtocolUDP, false, plain, "netpoller"},
		{ProtocolCRR, false, plain, "netpoller"},
	}
	if descriptors.MachineCPUs() >= 2 {
		cases = append(cases, ioCase{ProtocolTCP, true, nil, "busy-poll"}, ioCase{ProtocolUDP, true, nil, "busy-poll"})
	}
	for _, tc := range cases {
		res, err := Run(context.Background(), Config{Addr: addr, Protocol: tc.mode, BusyPoll: tc.busy, Dial: tc.dial,
			RequestSize: 32, ResponseSize: 100, Duration: 300 * time.Millisecond}, nil)
		if err != nil || res.Transactions == 0 || res.IO != tc.want {
			t.Errorf("%s busy=%v: %d transactions, io %q, %v; want some, io %q", tc.mode, tc.busy, res.Transactions, res.IO, err, tc.want)
		}
	}
}

// TestBusyPollFlag: a spec's busy_poll reaches the client's command line.
func TestBusyPollFlag(t *testing.T) {
	args := func(ps workload.Params) []string {
		cs, err := workload.Set{descriptors.RR}.Expand([]workload.Test{{Workload: "rr", Params: ps}})
		if err != nil {
			if descriptors.MachineCPUs() < 2 {
				t.Skip("busy polling needs two CPUs")
			}
			t.Fatal(err)
		}
		return cs[0].ClientArgs("198.18.0.2")
	}
	if a := args(workload.Params{"busy_poll": true}); !slices.Contains(a, "--busy-poll") {
		t.Errorf("client flags %q lack --busy-poll", a)
	}
	if a := args(nil); slices.Contains(a, "--busy-poll") {
		t.Errorf("client flags %q have --busy-poll unasked", a)
	}
}

// TestIdleServerSleeps: an idle server's threads sleep. The hot UDP
// socket's thread blocks in a raw call, which sysmon takes for running
// and signals every 10 ms; after the first signal its wait must enter the
// scheduler (hotIO.read), or the thread wakes 100 times a second, on the
// CPU that answers the tests.
func TestIdleServerSleeps(t *testing.T) {
	startServer(t)
	// 300 ms: the first signals, and the switch to sleeping.
	testutil.CheckIdle(t, 300*time.Millisecond, 50)
}

// TestServerHoldsOnlyHotPs: while rr tests run on the hot path the server
// has one P per hot thread and no spare (an idle P made every yield of a
// hot thread wake another thread), and still accepts, answers crr inline
// and opens UDP tests, by looking for them in the hot threads' yields.
func TestServerHoldsOnlyHotPs(t *testing.T) {
	// A server pinned to one CPU starts with one P, as in the bench.
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) }) // after the server's
	addr := startServer(t)
	waitProcs := func(what string, want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for runtime.GOMAXPROCS(0) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: GOMAXPROCS %d, want %d", what, runtime.GOMAXPROCS(0), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	buf := make([]byte, 64)
	transact := func(what string, c net.Conn, req, resp int) {
		t.Helper()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(make([]byte, req)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if _, err := io.ReadFull(c, buf[:resp]); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	hot := func(what string) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		var hb [helloLen]byte
		hello{0, 14, 14}.put(hb[:])
		c.Write(hb[:])
		transact(what, c, 14, 14)
		return c
	}
	// Idle, two: the accept thread's blocking wait keeps its P only
	// while another is idle (procs).
	waitProcs("idle", 2)
	c1 := hot("first tcp test")
	waitProcs("one tcp test", 1)
	c2 := hot("second tcp test, accepted while quiet")
	waitProcs("two tcp tests", 2)

	// crr, answered inline: the hello and request in one write.
	crr, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, helloLen+14)
	hello{flagOnce, 14, 14}.put(first)
	crr.SetDeadline(time.Now().Add(5 * time.Second))
	crr.Write(first)
	if b, err := io.ReadAll(crr); err != nil || len(b) != 14 {
		t.Fatalf("crr while quiet: %d bytes, %v", len(b), err)
	}
	crr.Close()

	u, ctl := openUDPTest(t, addr, 14, 14)
	waitProcs("two tcp tests and a udp test", 3)
	transact("udp test", u, 14, 14)
	for _, c := range []net.Conn{c1, c2, ctl} {
		c.Close()
	}
	waitProcs("all closed", 2)
}

// TestFirstDataReadAgain: the hot listener reads a new connection's first
// data to answer crr inline; whatever else it read (a hello in pieces, an
// rr request, part of a crr request, a crr request too large to answer
// inline) is read again by the connection's server, byte for byte. First
// data that comes late, within the listener's wait for it or after, is
// answered all the same.
func TestFirstDataReadAgain(t *testing.T) {
	addr := startServer(t)
	hi := func(flags uint32, req, resp int) []byte {
		b := make([]byte, helloLen)
		hello{flags, uint32(req), uint32(resp)}.put(b)
		return b
	}
	zeros := func(n int) []byte { return make([]byte, n) }
	cat := func(bs ...[]byte) []byte { return slices.Concat(bs...) }
	for _, tc := range []struct {
		name   string
		writes [][]byte      // each written after the answer to the one before
		answer []int         // the bytes answered to each write
		eof    bool          // the server closes after the last answer
		delay  time.Duration // before the first write
	}{
		{"rr, hello and request at once", [][]byte{cat(hi(0, 5, 7), zeros(5)), zeros(5)}, []int{7, 7}, false, 0},
		{"rr, hello and part of the request", [][]byte{cat(hi(0, 5, 7), zeros(3)), zeros(2), zeros(5)}, []int{0, 7, 7}, false, 0},
		{"rr, the hello in two pieces", [][]byte{hi(0, 5, 7)[:9], cat(hi(0, 5, 7)[9:], zeros(5))}, []int{0, 7}, false, 0},
		{"crr, part of the request", [][]byte{cat(hi(flagOnce, 5, 7), zeros(3)), zeros(2)}, []int{0, 7}, true, 0},
		{"crr, a request too large to answer inline", [][]byte{cat(hi(flagOnce, maxInline+1, 7), zeros(maxInline+1))}, []int{7}, true, 0},
		{"crr, at once", [][]byte{cat(hi(flagOnce, 5, 7), zeros(5))}, []int{7}, true, 0},
		{"crr, within the listener's wait", [][]byte{cat(hi(flagOnce, 5, 7), zeros(5))}, []int{7}, true, firstDataWait / 4},
		{"crr, after the listener's wait", [][]byte{cat(hi(flagOnce, 5, 7), zeros(5))}, []int{7}, true, 5 * firstDataWait},
		{"rr, after the listener's wait", [][]byte{cat(hi(0, 5, 7), zeros(5)), zeros(5)}, []int{7, 7}, false, 5 * firstDataWait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			time.Sleep(tc.delay)
			buf := make([]byte, 64)
			for i, w := range tc.writes {
				if _, err := c.Write(w); err != nil {
					t.Fatal(err)
				}
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.ReadFull(c, buf[:tc.answer[i]]); err != nil {
					t.Fatalf("write %d: %v", i+1, err)
				}
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				n, err := c.Read(buf)
				last := i == len(tc.writes)-1
				switch {
				case last && tc.eof:
					if err != io.EOF {
						t.Fatalf("after the answer: %d bytes, %v; want EOF", n, err)
					}
				case n != 0 || !isTimeout(err):
					t.Fatalf("write %d: %d bytes beyond the answer of %d (%v)", i+1, n, tc.answer[i], err)
				}
			}
		})
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
