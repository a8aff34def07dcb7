package conns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/rr"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// Config is one conns client run.
type Config struct {
	Addr        string // the server's HOST[:PORT], its rr port
	Connections int
	Trickle     time.Duration // a byte per connection this often; 0: idle
	Timeout     time.Duration // on each connection's handshake
	Duration    time.Duration // the probe's, once the connections are open
	Interval    time.Duration
}

const (
	// openFor bounds opening: connections not opened by then are not
	// attempted (unopened), so that a full table dropping every SYN cannot
	// hold a cell for connections × timeout; and the probe, dialled first,
	// must send its hello within the rr server's ControlTimeout.
	openFor = serverkit.ControlTimeout - 2*time.Second
	// dialers open connections at once.
	dialers = 512
	// connMemory is what a connection's two sockets and conntrack
	// entries take in the kernel, roughly (a TCP socket is about 2 KiB
	// of slab, with its file, inode and dentry): the memory check's unit.
	connMemory = 8 << 10
)

// Fit says in one line why the machine cannot hold n connections from
// one client address to ports server ports: too few open files
// (RLIMIT_NOFILE's hard limit), too few source ports
// (net.ipv4.ip_local_port_range, per destination port), too little
// memory (MemAvailable at connMemory a connection). files is the limit,
// lo..hi the port range, avail MemAvailable in bytes (0: unknown).
func Fit(n, ports, files, lo, hi int, avail int64) error {
	if need := n + fileMargin; need > files {
		return fmt.Errorf("--connections %d: the open files limit is %d (RLIMIT_NOFILE, fs.nr_open); %d connections need %d", n, files, n, need)
	}
	if per := hi - lo + 1; lo > 0 && per > 0 && n > ports*per {
		return fmt.Errorf("--connections %d: one client address has %d source ports (ip_local_port_range %d %d) to each of the server's %d ports: at most %d",
			n, per, lo, hi, ports, ports*per)
	}
	if need := int64(n) * connMemory; avail > 0 && need > avail/2 {
		return fmt.Errorf("--connections %d: about %d MiB of kernel memory (%d KiB a connection) is more than half of the %d MiB available",
			n, need>>20, connMemory>>10, avail>>20)
	}
	return nil
}

// machineFit checks Fit against this process's namespace and machine.
func machineFit(n int) error {
	files, err := RaiseFiles(n + fileMargin)
	if err != nil {
		return err
	}
	lo, hi := 0, 0
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		lo, hi, _ = ParsePortRange(string(b))
	}
	var avail int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		avail = ParseMemAvailable(string(b))
	}
	return Fit(n, descriptors.ConnsHoldPorts, files, lo, hi, avail)
}

// ParsePortRange reads ip_local_port_range ("32768\t60999").
func ParsePortRange(s string) (lo, hi int, ok bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// ParseMemAvailable reads MemAvailable from /proc/meminfo, in bytes (0
// when absent).
func ParseMemAvailable(s string) int64 {
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb >= 0 && kb < 1<<50 {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// holdAddrs are the holder's addresses after the server's rr port.
func holdAddrs(addr string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--server %q: want HOST[:PORT]", addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p+descriptors.ConnsHoldPorts > 65535 {
		return nil, fmt.Errorf("--server %q: the port and the %d after it must be in 1..65535", addr, descriptors.ConnsHoldPorts)
	}
	out := make([]string, descriptors.ConnsHoldPorts)
	for i := range out {
		out[i] = net.JoinHostPort(host, strconv.Itoa(p+1+i))
	}
	return out, nil
}

// held are the open connections' sockets, duplicated off Go's netpoller.
type held struct {
	mu  sync.Mutex
	fds []int
	res descriptors.ConnsResult
}

// open dials n connections over the holder's addresses, dialers at a
// time, for at most openFor, and counts each outcome by kind.
func open(ctx context.Context, addrs []string, n int, timeout time.Duration) *held {
	h := &held{fds: make([]int, 0, min(n, 1<<16))}
	h.res.Requested = int64(n)
	ctx, cancel := context.WithTimeout(ctx, openFor)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(dialers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: timeout}
			for i := range next {
				c, err := d.DialContext(ctx, "tcp", addrs[i%len(addrs)])
				fd := -1
				if err == nil {
					fd, err = serverkit.Dup(c)
					c.Close()
				}
				h.count(fd, err, ctx.Err() != nil)
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(next)
	wg.Wait()
	return h
}

// count books one dial's outcome; a dial cut short by the end of opening
// is not counted as attempted.
func (h *held) count(fd int, err error, cut bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := &h.res
	switch {
	case err == nil:
		h.fds = append(h.fds, fd)
		r.Established++
	case errors.Is(err, syscall.ECONNREFUSED):
		r.Refused++
	case errors.Is(err, syscall.ECONNRESET):
		r.Reset++
	case errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, os.ErrDeadlineExceeded):
		r.TimedOut++
	case cut:
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			r.TimedOut++
		} else {
			r.Failed++
		}
	}
}

// trickle writes a byte to each held connection every period, spread
// evenly, until ctx ends; a connection whose write fails is lost.
func (h *held) trickle(ctx context.Context, every time.Duration) {
	if every <= 0 || len(h.fds) == 0 {
		return
	}
	const tick = 10 * time.Millisecond
	per := max(1, int(int64(len(h.fds))*int64(tick)/int64(every)))
	t := time.NewTicker(tick)
	defer t.Stop()
	i := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for range per {
			if fd := h.fds[i]; fd >= 0 {
				if _, err := unix.Write(fd, []byte{0}); err != nil && !errors.Is(err, unix.EAGAIN) {
					h.lose(i)
				}
			}
			i = (i + 1) % len(h.fds)
		}
	}
}

func (h *held) lose(i int) {
	unix.Close(h.fds[i])
	h.fds[i] = -1
	h.res.Lost++
}

// end counts the connections closed or reset while held (a peek that
// finds the end or an error) and closes every one with a reset, so that
// their state leaves the datapath's tables at once rather than after
// TIME_WAIT, before the next cell.
func (h *held) end() {
	var b [1]byte
	linger := &unix.Linger{Onoff: 1, Linger: 0}
	for i, fd := range h.fds {
		if fd < 0 {
			continue
		}
		n, _, err := unix.Recvfrom(fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		if (n == 0 && err == nil) || (err != nil && !errors.Is(err, unix.EAGAIN)) {
			h.lose(i)
			continue
		}
		_ = unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, linger)
		unix.Close(fd)
	}
	h.fds = nil
}

// Run opens the connections, then measures rr's round trip beside them
// for cfg.Duration while they idle or trickle, and closes them.
func Run(ctx context.Context, cfg Config) (descriptors.ConnsResult, error) {
	cfg.Addr = serverkit.WithPort(cfg.Addr, descriptors.ConnsPort)
	addrs, err := holdAddrs(cfg.Addr)
	if err != nil {
		return descriptors.ConnsResult{}, err
	}
	if err := machineFit(cfg.Connections); err != nil {
		return descriptors.ConnsResult{}, err
	}
	if err := descriptors.ConnsTrickleFits(int64(cfg.Connections), cfg.Trickle); err != nil {
		return descriptors.ConnsResult{}, err
	}
	// The probe's connection first, so that a table the held ones fill
	// cannot refuse it: it measures what the full table costs the
	// connections that have their state.
	d := net.Dialer{Timeout: cfg.Timeout}
	pc, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return descriptors.ConnsResult{}, fmt.Errorf("probe: %w", err)
	}
	var once sync.Once
	dial := func(context.Context, string, string) (net.Conn, error) {
		c, err := net.Conn(nil), errors.New("the probe dials once")
		once.Do(func() { c, err = pc, nil })
		return c, err
	}
	start := time.Now()
	h := open(ctx, addrs, cfg.Connections, cfg.Timeout)
	defer h.end()
	h.res.OpenSeconds = time.Since(start).Seconds()
	if err := ctx.Err(); err != nil {
		return h.res, err
	}
	tctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); h.trickle(tctx, cfg.Trickle) }()
	probe, err := rr.Run(ctx, rr.Config{Addr: cfg.Addr, Duration: cfg.Duration, Interval: cfg.Interval, Dial: dial}, func(rr.Interval) {})
	pc.Close()
	stop()
	<-done
	h.end()
	r := h.res
	r.Unopened = r.Requested - r.Established - r.Refused - r.TimedOut - r.Reset - r.Failed
	r.Workload, r.Type, r.Trickle = descriptors.ConnsName, "result", cfg.Trickle.Seconds()
	r.RoundTrip.P50, r.RoundTrip.P99, r.TransPerSec = probe.RoundTrip.P50, probe.RoundTrip.P99, probe.TransPerSec
	if err != nil {
		return r, fmt.Errorf("probe: %w", err)
	}
	return r, nil
}
