package cost

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/record"
)

// Where a cell's CPU went in the kernel: /proc/stat's per-core lines split
// each core's time into user, system, irq, softirq and steal, and
// /proc/softirqs counts the NET_RX and NET_TX softirqs each core ran. A
// datapath's cost lives mostly in softirq (receive processing, forwarding,
// bridging, netfilter, VXLAN) and system time (the sockets' system
// calls), which no process is charged with; both files are the
// machine's, so every lab host of this machine is in them at once.

// maxCPUs bounds the CPU numbers read from either file: a line naming a
// core past it is damaged, not a machine.
const maxCPUs = 1 << 16

// CoreTicks is one core's line of /proc/stat, in ticks (USER_HZ).
type CoreTicks struct {
	User, System, IRQ, Softirq, Steal uint64 // user includes nice
	Total                             uint64 // every column but guest and guest_nice
}

// parseCoreTicks reads the "cpuN" lines of /proc/stat, by core number.
// Columns a kernel lacks (irq and softirq before 2.6.0, steal before
// 2.6.11) stay 0.
func parseCoreTicks(text string) (map[int]CoreTicks, error) {
	out := map[int]CoreTicks{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || n < 0 || n >= maxCPUs {
			return nil, fmt.Errorf("/proc/stat: %q is not a core's line", f[0])
		}
		if len(f) < 5 {
			return nil, fmt.Errorf("/proc/stat: %s has %d columns, want at least 4", f[0], len(f)-1)
		}
		if _, dup := out[n]; dup {
			return nil, fmt.Errorf("/proc/stat: %s twice", f[0])
		}
		c, err := parseCPUColumns(f)
		if err != nil {
			return nil, err
		}
		out[n] = CoreTicks{User: c[cpuUser] + c[cpuNice], System: c[cpuSystem], IRQ: c[cpuIRQ], Softirq: c[cpuSoftirq], Steal: c[cpuSteal], Total: c.total()}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/stat: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/stat has no core lines")
	}
	return out, nil
}

// NetSoftirqs are one core's counts of the network softirqs.
type NetSoftirqs struct{ RX, TX uint64 }

// parseNetSoftirqs reads the NET_RX and NET_TX rows of /proc/softirqs, by
// core number: its header names the columns (CPU0 CPU1 ...; an offline
// core's column is missing, so the header, not the position, says which
// core a count is).
func parseNetSoftirqs(text string) (map[int]NetSoftirqs, error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var cpus []int
	out := map[int]NetSoftirqs{}
	seen := map[string]bool{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if cpus == nil {
			for _, h := range f {
				n, err := strconv.Atoi(strings.TrimPrefix(h, "CPU"))
				if !strings.HasPrefix(h, "CPU") || err != nil || n < 0 || n >= maxCPUs || slices.Contains(cpus, n) {
					return nil, fmt.Errorf("/proc/softirqs: header %q is not a core's column", h)
				}
				cpus = append(cpus, n)
			}
			continue
		}
		name := f[0]
		if name != "NET_RX:" && name != "NET_TX:" {
			continue
		}
		if seen[name] {
			return nil, fmt.Errorf("/proc/softirqs: %s twice", name)
		}
		seen[name] = true
		if len(f)-1 != len(cpus) {
			return nil, fmt.Errorf("/proc/softirqs: %s has %d counts for %d cores", name, len(f)-1, len(cpus))
		}
		for i, v := range f[1:] {
			x, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/softirqs %s: %q is not a number", name, v)
			}
			c := out[cpus[i]]
			if name == "NET_RX:" {
				c.RX = x
			} else {
				c.TX = x
			}
			out[cpus[i]] = c
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/softirqs: %w", err)
	}
	if !seen["NET_RX:"] || !seen["NET_TX:"] {
		return nil, fmt.Errorf("/proc/softirqs has no NET_RX or NET_TX row")
	}
	return out, nil
}

// KernelSnapshot is the per-core counters at one moment.
type KernelSnapshot struct {
	Cores    map[int]CoreTicks
	Softirqs map[int]NetSoftirqs
}

// ParseKernel reads a snapshot from the text of /proc/stat and
// /proc/softirqs.
func ParseKernel(stat, softirqs string) (*KernelSnapshot, error) {
	cores, err := parseCoreTicks(stat)
	if err != nil {
		return nil, err
	}
	irqs, err := parseNetSoftirqs(softirqs)
	if err != nil {
		return nil, err
	}
	return &KernelSnapshot{Cores: cores, Softirqs: irqs}, nil
}

// Kernel is where the CPU went between snapshots a and b, over every
// core both hold, with bytes the payload the cell moved; with pinned
// cores (a cores condition), the same over those in Pinned. nil when
// either snapshot is missing or no tick passed.
func Kernel(a, b *KernelSnapshot, bytes int64, pinned []int) *record.CellKernel {
	if a == nil || b == nil {
		return nil
	}
	all := kernelOver(a, b, nil)
	if all == nil {
		return nil
	}
	all.Bytes = max(0, bytes)
	if len(pinned) > 0 {
		all.Pinned = kernelOver(a, b, pinned)
	}
	return all
}

// since is what a counter at x then y counted: nothing when it went
// back (a core taken offline and on again).
func since(x, y uint64) uint64 {
	if y < x {
		return 0
	}
	return y - x
}

// kernelOver sums the cores in only (nil: every core), in ascending order.
func kernelOver(a, b *KernelSnapshot, only []int) *record.CellKernel {
	var cores []int
	for n := range b.Cores {
		if _, ok := a.Cores[n]; ok && (only == nil || slices.Contains(only, n)) {
			cores = append(cores, n)
		}
	}
	slices.Sort(cores)
	if len(cores) == 0 {
		return nil
	}
	var user, sys, irq, soft, total uint64
	k := &record.CellKernel{BusiestCore: -1}
	for _, n := range cores {
		ca, cb := a.Cores[n], b.Cores[n]
		t := since(ca.Total, cb.Total)
		s := since(ca.Softirq, cb.Softirq)
		user += since(ca.User, cb.User)
		sys += since(ca.System, cb.System)
		irq += since(ca.IRQ, cb.IRQ)
		soft += s
		total += t
		if t > 0 {
			if pct := 100 * float64(s) / float64(t); k.BusiestCore < 0 || pct > k.BusiestSoftirqPercent {
				k.BusiestCore, k.BusiestSoftirqPercent = n, math.Round(pct*100)/100
			}
		}
		k.NetRX += since(a.Softirqs[n].RX, b.Softirqs[n].RX)
		k.NetTX += since(a.Softirqs[n].TX, b.Softirqs[n].TX)
	}
	if total == 0 {
		return nil
	}
	// Ticks to seconds, to the tick: a cell's record stays short.
	sec := func(t uint64) float64 { return math.Round(float64(t)/clockTicks*100) / 100 }
	k.CPUSeconds, k.UserSeconds, k.SystemSeconds = sec(total), sec(user), sec(sys)
	k.IRQSeconds, k.SoftirqSeconds = sec(irq), sec(soft)
	if only != nil {
		k.Cores = cores
	}
	return k
}
