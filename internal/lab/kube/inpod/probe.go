package inpod

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Probe states, one a line on Probe's stdout: "pass" or "block", then how
// long before the line the dial that found the state began (ns), so the
// driver can take that out of the time it measures.
const (
	ProbePass  = "pass"
	ProbeBlock = "block"
)

// Listen accepts TCP connections on port and closes them at once: the
// server end of an enforcement probe, which needs no workload. It returns
// when ctx ends.
func Listen(ctx context.Context, port int) error {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", port, err)
	}
	go func() { <-ctx.Done(); l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		c.Close()
	}
}

// Bounds of Probe's every and timeout: a dial every nanosecond is a busy
// loop, not a probe, and one an hour apart tells nothing within a run.
const (
	MinProbeEvery = time.Millisecond
	MaxProbeEvery = time.Hour
)

// CheckProbe refuses an every or timeout (named by their flags) outside
// [MinProbeEvery, MaxProbeEvery].
func CheckProbe(every, timeout time.Duration) error {
	for _, f := range []struct {
		flag string
		d    time.Duration
	}{{"--every", every}, {"--timeout", timeout}} {
		if f.d < MinProbeEvery || f.d > MaxProbeEvery {
			return fmt.Errorf("%s %s: want %s to %s", f.flag, f.d, MinProbeEvery, MaxProbeEvery)
		}
	}
	return nil
}

// Probe dials addr over TCP every every (each dial bounded by timeout)
// until ctx ends, and writes a line each time the state changes (the first
// dial's state included): "pass D" or "block D", D the nanoseconds since
// that dial began. A dial refused or timed out blocks.
func Probe(ctx context.Context, addr string, every, timeout time.Duration, stdout io.Writer) error {
	if err := CheckProbe(every, timeout); err != nil {
		return err
	}
	last := ""
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		start := time.Now()
		d := net.Dialer{Timeout: timeout}
		c, err := d.DialContext(ctx, "tcp", addr)
		if ctx.Err() != nil {
			return nil
		}
		state := ProbePass
		if err != nil {
			state = ProbeBlock
		} else {
			c.Close()
		}
		if state != last {
			if _, err := fmt.Fprintf(stdout, "%s %d\n", state, time.Since(start).Nanoseconds()); err != nil {
				return err
			}
			last = state
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// ParseProbe reads one of Probe's lines: its state and how long before
// the line its dial began.
func ParseProbe(line string) (state string, ago time.Duration, err error) {
	f := strings.Fields(line)
	if len(f) != 2 || (f[0] != ProbePass && f[0] != ProbeBlock) {
		return "", 0, fmt.Errorf("probe: line %q: want pass|block NS", line)
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || ns < 0 {
		return "", 0, fmt.Errorf("probe: line %q: want pass|block NS", line)
	}
	return f[0], time.Duration(ns), nil
}
