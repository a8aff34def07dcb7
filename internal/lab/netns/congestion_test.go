package netns_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testutil"
)

// congestionOf reads a connected TCP socket's congestion control.
func congestionOf(t *testing.T, c net.Conn) string {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var cc string
	var serr error
	_ = raw.Control(func(fd uintptr) {
		cc, serr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	})
	if serr != nil {
		t.Fatal(serr)
	}
	return strings.TrimRight(cc, "\x00")
}

// TestCongestionControl checks that both ends of a connection across a lab
// use the lab's congestion control, whatever the machine's default: cubic
// by default, reno when the condition says so, on a mode whose server sits
// in a container namespace behind NAT.
func TestCongestionControl(t *testing.T) {
	testutil.RequireRoot(t)
	m, _ := drivers.Catalog().Mode("bridge")
	for _, cc := range []string{"", "reno"} {
		want := cc
		if want == "" {
			want = conditions.DefaultCongestion
		}
		t.Run(want, func(t *testing.T) {
			name := "tcc" + want
			l, err := lab.Up(netns.Driver{}, lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"c", "s1"}, false), Port: 9400,
				Conditions: conditions.Set{TCPCongestion: cc}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := lab.Down(name, netns.Driver{}); err != nil {
					t.Error(err)
				}
			})
			if l.TCPCongestion != want || l.TCPCongestionVia == "" {
				t.Errorf("lab records congestion control %q via %q, want %q", l.TCPCongestion, l.TCPCongestionVia, want)
			}
			ep, _ := l.Endpoint("s1")
			var ln net.Listener
			if err := namespace.Do(ep.NS, func() error {
				var err error
				ln, err = net.Listen("tcp4", ep.Listen)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				c, err := ln.Accept()
				if err == nil {
					accepted <- c
				}
				close(accepted)
			}()
			client, err := namespace.Dialer(l.Hosts[0].NS)(t.Context(), "tcp4", ep.External)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			var server net.Conn
			select {
			case server = <-accepted:
			case <-time.After(5 * time.Second):
				t.Fatal("no connection accepted")
			}
			if server == nil {
				t.Fatal("accept failed")
			}
			defer server.Close()
			if got := congestionOf(t, client); got != want {
				t.Errorf("client side uses %s, want %s", got, want)
			}
			if got := congestionOf(t, server); got != want {
				t.Errorf("server side uses %s, want %s", got, want)
			}
		})
	}
}
