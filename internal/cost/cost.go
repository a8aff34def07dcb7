// Package cost measures what a workload costs the machine: each process's
// CPU (user and system) and peak memory from /proc, the CPU of every core
// each second from /proc/stat (the 2017 Coherence thesis found one core saturated while the
// average looked idle), the memory committed above what was committed
// before the run (sar's kbcommit delta, from Committed_AS), and each cell's
// load: what the machine ran besides the run, and what the hypervisor took
// (load.go).
package cost

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times; it is 100 on Linux.
const clockTicks = 100

// Proc is a plain process's resource use.
type Proc struct {
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	PeakRSS       int64   `json:"peak_rss_bytes"` // VmHWM
	RSS           int64   `json:"rss_bytes"`      // VmRSS
}

// ProcUsage reads a process's CPU times and memory from /proc.
func ProcUsage(pid int) (Proc, error) {
	var p Proc
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	u, s, err := parseStat(string(b))
	if err != nil {
		return p, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	p.UserSeconds, p.SystemSeconds = u, s
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		p.PeakRSS = statusKB(string(b), "VmHWM:")
		p.RSS = statusKB(string(b), "VmRSS:")
	}
	return p, nil
}

// parseStat returns utime and stime in seconds from a /proc/PID/stat line.
// The command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseStat(line string) (user, system float64, err error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("no command name in %q", line)
	}
	f := strings.Fields(line[i+1:])
	// After ")": state(3) ppid(4) ... utime(14) stime(15): indexes 11 and 12.
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("%d fields after the command name, want >= 13", len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("utime %q stime %q: not numbers", f[11], f[12])
	}
	return float64(ut) / clockTicks, float64(st) / clockTicks, nil
}

// statusKB reads a "Key: N kB" line of /proc/*/status or /proc/meminfo, in bytes.
func statusKB(text, key string) int64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n * 1024
		}
	}
	return 0
}

// MemInfo reads the line key ("Committed_AS:") of /proc/meminfo, in
// bytes (0 when it has none).
func MemInfo(key string) (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read /proc/meminfo: %w", err)
	}
	return statusKB(string(b), key), nil
}

// Committed returns the memory the kernel has committed (Committed_AS).
func Committed() (int64, error) { return MemInfo("Committed_AS:") }

// cpuColumns are the counters of a /proc/stat cpu line, in ticks: user,
// nice, system, idle, iowait, irq, softirq and steal (0 where a kernel
// lacks them). Guest and guest_nice, already in user and nice, are read
// (a damaged one is an error) but not kept.
type cpuColumns [8]uint64

// Columns of cpuColumns.
const (
	cpuUser, cpuNice, cpuSystem, cpuIdle, cpuIOWait, cpuIRQ, cpuSoftirq, cpuSteal = 0, 1, 2, 3, 4, 5, 6, 7
)

// parseCPUColumns reads the counters after a cpu line's name, f[0].
func parseCPUColumns(f []string) (cpuColumns, error) {
	var c cpuColumns
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return c, fmt.Errorf("/proc/stat %s: %q is not a number", f[0], v)
		}
		if i < len(c) {
			c[i] = n
		}
	}
	return c, nil
}

// total is every kept counter: the CPU's whole time.
func (c cpuColumns) total() uint64 {
	var t uint64
	for _, n := range c {
		t += n
	}
	return t
}

// times are one CPU's counters from /proc/stat, in ticks.
type times struct{ busy, total uint64 }

// parseProcStat returns the "cpu" line's counters followed by each core's.
// Busy is everything but idle and iowait, as sar's 100 - %idle counts it.
func parseProcStat(text string) ([]times, error) {
	var out []times
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		c, err := parseCPUColumns(f)
		if err != nil {
			return nil, err
		}
		out = append(out, times{busy: c.total() - c[cpuIdle] - c[cpuIOWait], total: c.total()})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/stat has no cpu lines")
	}
	return out, nil
}

// busyPercent is the share of ticks spent busy between two readings.
func busyPercent(a, b times) float64 {
	if b.total <= a.total {
		return 0
	}
	return 100 * float64(b.busy-a.busy) / float64(b.total-a.total)
}

// CPUSample is record.CPUSample: stored with the run.
type CPUSample = record.CPUSample

// Sample samples /proc/stat and Committed_AS every interval until ctx ends,
// handing each interval to emit.
func Sample(ctx context.Context, interval time.Duration, emit func(CPUSample)) error {
	read := func() ([]times, error) {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return nil, err
		}
		return parseProcStat(string(b))
	}
	prev, err := read()
	if err != nil {
		return err
	}
	last := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick.C:
			cur, err := read()
			if err != nil {
				return err
			}
			s := CPUSample{Workload: "cpu", Time: now.UTC(), Seconds: now.Sub(last).Seconds(), All: busyPercent(prev[0], cur[0])}
			for i := 1; i < len(cur) && i < len(prev); i++ {
				s.Cores = append(s.Cores, busyPercent(prev[i], cur[i]))
			}
			s.Committed, _ = Committed()
			emit(s)
			prev, last = cur, now
		}
	}
}
