package delayline_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnperf/cnperf/internal/lab/delayline"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/testutil"
)

// The test's namespaces are marked as a lab's, so that `cnperf clean`
// finds any a crashed test leaves: hosts a and b, each with eth0 to the
// middle namespace m, where the line joins ends la and lb.
const testLab = "dltest"

var (
	addrA = net.IPv4(198, 18, 250, 1)
	addrB = net.IPv4(198, 18, 250, 2)
)

type rig struct {
	a, b, m string
	line    *delayline.Line
	done    chan error
	cancel  context.CancelFunc
}

func ns(host string) string { return "cnperf-" + testLab + "-" + host }

// newRig builds a and b joined only through a delay line with cfg's
// delay, jitter, loss and queue, running in this process.
func newRig(t *testing.T, cfg delayline.Config) *rig {
	t.Helper()
	testutil.RequireRoot(t)
	if err := (netns.Driver{}).Down(testLab); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := (netns.Driver{}).Down(testLab); err != nil {
			t.Error(err)
		}
	})
	self, err := owner.Self()
	if err != nil {
		t.Fatal(err)
	}
	mark := netns.Mark{Lab: testLab, Mode: "test", Owner: self}.String()
	r := &rig{a: ns("a"), b: ns("b"), m: ns("m")}
	for _, n := range []string{r.a, r.b, r.m} {
		if err := namespace.Create(n, mark); err != nil {
			t.Fatal(err)
		}
	}
	b := netdev.B{Lab: testLab}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.Veth(r.m, "la", "", r.a, "eth0", 1500))
	must(b.Veth(r.m, "lb", "", r.b, "eth0", 1500))
	// No IPv6: its router and neighbour solicitations would cross the
	// line and spoil the counts.
	for _, n := range []string{r.a, r.b, r.m} {
		must(b.Sysctl(n, "net.ipv6.conf.all.disable_ipv6", "1"))
	}
	must(b.Addr(r.a, "eth0", addrA.String()+"/24"))
	must(b.Addr(r.b, "eth0", addrB.String()+"/24"))
	// Static neighbours: no ARP through the line, so that the first
	// datagrams are not held (or dropped) by the kernel while it resolves.
	macA, macB := mac(t, r.a), mac(t, r.b)
	must(neigh(r.a, addrB, macB))
	must(neigh(r.b, addrA, macA))
	cfg.Local, cfg.Remote = "la", "lb"
	if cfg.QueueBytes == 0 {
		cfg.QueueBytes = 16 << 20
	}
	cfg.Seed = 1
	must(namespace.Do(r.m, func() error {
		var err error
		r.line, err = delayline.Open(cfg)
		return err
	}))
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- r.line.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

// stop ends the line and waits for it.
func (r *rig) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	<-r.done
}

func mac(t *testing.T, n string) net.HardwareAddr {
	t.Helper()
	h, err := namespace.Handle(n)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName("eth0")
	if err != nil {
		t.Fatal(err)
	}
	return l.Attrs().HardwareAddr
}

func neigh(n string, ip net.IP, hw net.HardwareAddr) error {
	h, err := namespace.Handle(n)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	return h.NeighAdd(&netlink.Neigh{LinkIndex: l.Attrs().Index, State: netlink.NUD_PERMANENT, IP: ip, HardwareAddr: hw})
}

// udp opens a UDP socket in namespace n on addr:port.
func udp(t *testing.T, n string, ip net.IP, port int) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	if err := namespace.Do(n, func() error {
		var err error
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: ip, Port: port})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadBuffer(8 << 20)
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrips times n UDP echoes from a to b through the line.
func roundTrips(t *testing.T, r *rig, n int) []time.Duration {
	t.Helper()
	srv := udp(t, r.b, addrB, 7000)
	go func() {
		buf := make([]byte, 64)
		for {
			k, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = srv.WriteToUDP(buf[:k], from)
		}
	}()
	cli := udp(t, r.a, addrA, 7001)
	dst := &net.UDPAddr{IP: addrB, Port: 7000}
	var rtts []time.Duration
	buf := make([]byte, 64)
	for i := range n {
		msg := []byte(fmt.Sprint(i))
		start := time.Now()
		if _, err := cli.WriteToUDP(msg, dst); err != nil {
			t.Fatal(err)
		}
		for {
			_ = cli.SetReadDeadline(time.Now().Add(2 * time.Second))
			k, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				t.Fatalf("echo %d: %v", i, err)
			}
			if string(buf[:k]) == string(msg) {
				break
			}
		}
		rtts = append(rtts, time.Since(start))
	}
	return rtts
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestLineDelays: a 30 ms delay each way makes a 60 ms round trip; at
// zero delay the line adds little, and its own lateness says how little.
func TestLineDelays(t *testing.T) {
	for _, tc := range []struct {
		delay time.Duration
		lo    time.Duration
		hi    time.Duration
	}{
		{0, 0, 2 * time.Millisecond},
		{30 * time.Millisecond, 60 * time.Millisecond, 62 * time.Millisecond},
	} {
		t.Run(tc.delay.String(), func(t *testing.T) {
			r := newRig(t, delayline.Config{Delay: tc.delay})
			n := 200
			if tc.delay > 0 {
				n = 40
			}
			med := median(roundTrips(t, r, n))
			r.stop()
			st := r.line.Stats()
			t.Logf("median round trip %s; the line's lateness each way: median %s, p99 %s, max %s (local to remote), median %s (back)",
				med, st[0].LateMedian, st[0].LateP99, st[0].LateMax, st[1].LateMedian)
			if med < tc.lo || med > tc.hi {
				t.Errorf("median round trip %s, want %s to %s", med, tc.lo, tc.hi)
			}
			for _, d := range st {
				if d.Frames < uint64(n) || d.Dropped != 0 || d.Lost != 0 {
					t.Errorf("%s to %s: %d frames, %d dropped, %d lost; want at least %d, none dropped or lost", d.From, d.To, d.Frames, d.Dropped, d.Lost, n)
				}
				if d.LateMedian > time.Millisecond {
					t.Errorf("%s to %s: frames leave %s late (median)", d.From, d.To, d.LateMedian)
				}
			}
		})
	}
}

// blast sends n datagrams of size bytes from a to b in bursts of burst,
// a pause after each, and returns how many b received within the wait.
func blast(t *testing.T, r *rig, n, size, burst int, pause, wait time.Duration) int {
	t.Helper()
	srv := udp(t, r.b, addrB, 7100)
	got := make(chan int, 1)
	go func() {
		buf := make([]byte, 2048)
		k := 0
		for {
			_ = srv.SetReadDeadline(time.Now().Add(wait))
			if _, _, err := srv.ReadFromUDP(buf); err != nil {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					t.Error(err)
				}
				got <- k
				return
			}
			k++
		}
	}()
	cli := udp(t, r.a, addrA, 7101)
	dst := &net.UDPAddr{IP: addrB, Port: 7100}
	msg := make([]byte, size)
	for i := range n {
		if _, err := cli.WriteToUDP(msg, dst); err != nil {
			t.Fatal(err)
		}
		if burst > 0 && i%burst == burst-1 {
			time.Sleep(pause)
		}
	}
	return <-got
}

// TestLineLoss: 10 % loss drops about 10 % of the datagrams, and the line
// counts each one it dropped.
func TestLineLoss(t *testing.T) {
	r := newRig(t, delayline.Config{LossPercent: 10})
	const n = 10000
	got := blast(t, r, n, 200, 20, time.Millisecond, 500*time.Millisecond)
	r.stop()
	st := r.line.Stats()[0]
	share := 1 - float64(got)/n
	t.Logf("received %d of %d (%.2f %% lost); the line: %d forwarded, %d lost, %d dropped", got, n, 100*share, st.Frames, st.Lost, st.Dropped)
	// 3.3 standard deviations of a binomial count at p = 0.1.
	if share < 0.09 || share > 0.11 {
		t.Errorf("lost %.2f %% of the datagrams, want 10 ± 1 %%", 100*share)
	}
	if st.Dropped != 0 || st.Lost != uint64(n-got) {
		t.Errorf("the line counts %d lost and %d dropped; %d datagrams did not arrive", st.Lost, st.Dropped, n-got)
	}
}

// TestLineDropsWhenFull: a sender far faster than a small queue can hold
// for the delay loses the overflow, and the line counts every frame it
// dropped; what it forwarded arrives.
func TestLineDropsWhenFull(t *testing.T) {
	r := newRig(t, delayline.Config{Delay: 200 * time.Millisecond, QueueBytes: delayline.MinQueueBytes})
	const n, size = 3000, 1400
	got := blast(t, r, n, size, 100, 100*time.Microsecond, time.Second)
	r.stop()
	st := r.line.Stats()[0]
	t.Logf("received %d of %d; the line: %d forwarded, %d dropped, peak queue %d bytes of %d", got, n, st.Frames, st.Dropped, st.PeakQueueBytes, delayline.MinQueueBytes)
	if st.Dropped == 0 {
		t.Fatal("no drops counted, with 4.2 MB sent into a 131 kB queue within 200 ms")
	}
	if uint64(got) != st.Frames {
		t.Errorf("%d datagrams arrived, the line forwarded %d", got, st.Frames)
	}
	if st.Frames+st.Dropped != n {
		t.Errorf("forwarded %d + dropped %d should account for all %d sent", st.Frames, st.Dropped, n)
	}
	if st.PeakQueueBytes > delayline.MinQueueBytes {
		t.Errorf("peak queue %d bytes beyond the bound %d", st.PeakQueueBytes, delayline.MinQueueBytes)
	}
}

// The counters the line writes read back as they were.
func TestStatsFile(t *testing.T) {
	path := t.TempDir() + "/s.json"
	r := newRig(t, delayline.Config{Stats: path})
	roundTrips(t, r, 5)
	r.stop()
	got, err := delayline.ReadStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := r.line.Stats(); !slices.Equal(got, want) {
		t.Errorf("stats file %+v, line %+v", got, want)
	}
}
