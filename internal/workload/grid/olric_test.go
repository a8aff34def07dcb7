package grid

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// freePorts finds a port whose next port is free too, on loopback.
func freePorts(t testing.TB) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p >= 65535 {
			continue
		}
		l2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+1)))
		if err != nil {
			continue
		}
		l2.Close()
		return p
	}
	t.Fatal("no two free ports in a row")
	return 0
}

// TestGridOnLoopback: a client joins the embedded member, its loop puts
// and removes without failures, and the member's gossip listens on the
// next port of the same address.
func TestGridOnLoopback(t *testing.T) {
	addr := startMember(t)
	ctx := context.Background()
	store, closeFn, err := Dial(ctx, addr, time.Second, 10*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	res, err := Run(ctx, Config{Addr: addr, Duration: time.Second, Interval: 200 * time.Millisecond, ValueSize: 700}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d puts/s, put p50 %.0f µs, p99 %.0f µs", int(res.PutsPerSec), res.Put.P50, res.Put.P99)
	if res.Puts < 100 || res.Failures() != 0 || res.Removes < res.Puts-1 {
		t.Errorf("%d puts, %d removes, %d failures", res.Puts, res.Removes, res.Failures())
	}
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	gossip := net.JoinHostPort("127.0.0.1", strconv.Itoa(GossipPort(port)))
	if c, err := net.DialTimeout("tcp", gossip, time.Second); err != nil {
		t.Errorf("gossip is not on %s: %v", gossip, err)
	} else {
		c.Close()
	}
}

// TestDialFailsWithoutMember: nothing listening is a failure to join,
// within the join timeout, naming the address.
func TestDialFailsWithoutMember(t *testing.T) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePorts(t)))
	start := time.Now()
	_, _, err := Dial(context.Background(), addr, 100*time.Millisecond, 300*time.Millisecond, io.Discard)
	if err == nil {
		t.Fatal("joined a grid that is not there")
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("gave up after %s", time.Since(start))
	}
	t.Log(err)
}

// TestMemberConfig: the member binds the address it announces, never an
// unspecified one; the port leaves room for gossip.
func TestMemberConfig(t *testing.T) {
	for _, tc := range []struct{ addr, err string }{
		{"127.0.0.1:5204", ""},
		{"localhost:5204", ""},
		{":5204", ""},
		{"0.0.0.0:5204", ""},
		{"[::]:5204", ""},
		{"[::0]:5204", ""},
		{"[0::0]:5204", ""},
		{"[0:0:0:0:0:0:0:0]:5204", ""},
		{"[::ffff:0.0.0.0]:5204", ""},
		{"[::ffff:127.0.0.1]:5204", ""},
		{"[fe80::1%lo]:5204", "zone"},
		{"224.0.0.1:5204", "multicast"},
		{"[ff02::1]:5204", "multicast"},
		{"255.255.255.255:5204", "broadcast"},
		{"127.0.0.1:65535", "1..65534"},
		{"127.0.0.1:0", "1..65534"},
		{"nonsense", "want HOST:PORT"},
	} {
		c, err := memberConfig(tc.addr, nil, io.Discard)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v; want an error with %q", tc.addr, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.addr, err)
			continue
		}
		ip, perr := netip.ParseAddr(c.BindAddr)
		if perr != nil || ip.IsUnspecified() || c.MemberlistConfig.BindAddr != c.BindAddr || c.MemberlistConfig.BindPort != c.BindPort+1 {
			t.Errorf("%s: binds %s:%d, gossip %s:%d", tc.addr, c.BindAddr, c.BindPort, c.MemberlistConfig.BindAddr, c.MemberlistConfig.BindPort)
		}
		if c.DMaps.MaxKeys == 0 || c.DMaps.MaxInuse == 0 || c.PartitionCount == 0 {
			t.Errorf("%s: unbounded maps: %+v", tc.addr, c.DMaps)
		}
	}
}

// FuzzMemberConfig: whatever --listen holds, the member either refuses it
// in one line or binds a concrete address it can announce, its gossip on
// the next port, both in range.
func FuzzMemberConfig(f *testing.F) {
	for _, s := range []string{"127.0.0.1:5204", ":5204", "localhost:1", "[::1]:65534", "0.0.0.0:65535", "a:b", "1.2.3.4:0", "::",
		"[::0]:5204", "[0::0]:1", "[0:0:0:0:0:0:0:0]:5204", "[::ffff:0.0.0.0]:2", "[fe80::1%eth0]:3", "224.0.0.1:4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		c, err := memberConfig(addr, nil, io.Discard)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		ip, perr := netip.ParseAddr(c.BindAddr)
		switch {
		case perr != nil || ip.IsUnspecified() || ip.Unmap().IsUnspecified() || ip.IsMulticast() || ip.Zone() != "":
			t.Fatalf("%q: binds %q", addr, c.BindAddr)
		case c.BindPort < 1 || c.MemberlistConfig.BindPort != c.BindPort+1 || c.MemberlistConfig.BindPort > 65535:
			t.Fatalf("%q: ports %d, %d", addr, c.BindPort, c.MemberlistConfig.BindPort)
		}
	})
}

// TestServeRefusesBadListen: a --listen the member cannot use is bad
// input (exit 2, not a Failure), refused before anything binds.
func TestServeRefusesBadListen(t *testing.T) {
	con := workload.Console{Stdout: io.Discard, Stderr: io.Discard,
		Listen:        func(s string, _ int) (string, error) { return s, nil },
		DefaultListen: func(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)) }}
	for _, listen := range []string{"127.0.0.1:65535", "127.0.0.1:0", "224.0.0.1:5204", "[fe80::1%lo]:5204", "nohost:5204"} {
		cmd := ServeCommand(con)
		cmd.SetArgs([]string{"--listen", listen})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		var f workload.Failure
		if err == nil || errors.As(err, &f) || !strings.Contains(err.Error(), "--listen") {
			t.Errorf("--listen %s: %v; want bad input naming --listen", listen, err)
		}
	}
}
