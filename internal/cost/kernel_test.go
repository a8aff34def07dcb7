package cost

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// A 2-core machine's /proc/stat and /proc/softirqs, as kernel 6.x writes them.
const (
	stat2 = "cpu  300 20 130 1600 10 6 40 4 0 0\n" +
		"cpu0 100 10 50 800 5 1 30 2 0 0\n" +
		"cpu1 200 10 80 800 5 5 10 2 0 0\n" +
		"intr 12345 0 0\nctxt 999\n"
	softirqs2 = "                    CPU0       CPU1       \n" +
		"          HI:          0          1\n" +
		"       TIMER:      10000      20000\n" +
		"      NET_TX:         50         60\n" +
		"      NET_RX:       7000       3000\n" +
		"       BLOCK:          0          0\n"
)

func TestParseCoreTicks(t *testing.T) {
	cases := []struct {
		name, text string
		want       map[int]CoreTicks
		wantErr    bool
	}{
		{"two cores", stat2, map[int]CoreTicks{
			0: {User: 110, System: 50, IRQ: 1, Softirq: 30, Steal: 2, Total: 998},
			1: {User: 210, System: 80, IRQ: 5, Softirq: 10, Steal: 2, Total: 1112},
		}, false},
		// A core offline: its line is missing, the numbers say which is which.
		{"a gap", "cpu 1 1 1 1\ncpu0 1 0 1 8\ncpu3 2 0 2 6 0 1 1\n", map[int]CoreTicks{
			0: {User: 1, System: 1, Total: 10}, 3: {User: 2, System: 2, IRQ: 1, Softirq: 1, Total: 12},
		}, false},
		{"guest left out", "cpu0 10 0 0 0 0 0 0 0 99 99\n", map[int]CoreTicks{0: {User: 10, Total: 10}}, false},
		{"no core lines", "cpu 1 2 3 4\nintr 1\n", nil, true},
		{"too short", "cpu0 1 2 3\n", nil, true},
		{"not a number", "cpu0 1 2 x 4\n", nil, true},
		{"negative", "cpu0 1 2 -3 4\n", nil, true},
		{"a core twice", "cpu0 1 2 3 4\ncpu0 1 2 3 4\n", nil, true},
		{"core number past the bound", "cpu99999999 1 2 3 4\n", nil, true},
		{"not a core", "cpux 1 2 3 4\n", nil, true},
	}
	for _, c := range cases {
		got, err := parseCoreTicks(c.text)
		if (err != nil) != c.wantErr || (!c.wantErr && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%s: got %+v, %v; want %+v, err %v", c.name, got, err, c.want, c.wantErr)
		}
	}
}

func TestParseNetSoftirqs(t *testing.T) {
	cases := []struct {
		name, text string
		want       map[int]NetSoftirqs
		wantErr    bool
	}{
		{"two cores", softirqs2, map[int]NetSoftirqs{0: {RX: 7000, TX: 50}, 1: {RX: 3000, TX: 60}}, false},
		{"a gap in the cores", "CPU0 CPU2\nNET_TX: 1 2\nNET_RX: 3 4\n", map[int]NetSoftirqs{0: {RX: 3, TX: 1}, 2: {RX: 4, TX: 2}}, false},
		{"no NET_RX", "CPU0\nNET_TX: 1\n", nil, true},
		{"a count missing", "CPU0 CPU1\nNET_TX: 1\nNET_RX: 1 2\n", nil, true},
		{"a count too many", "CPU0\nNET_TX: 1 2\nNET_RX: 1\n", nil, true},
		{"not a number", "CPU0\nNET_TX: x\nNET_RX: 1\n", nil, true},
		{"bad header", "CORE0\nNET_TX: 1\nNET_RX: 1\n", nil, true},
		{"a core twice in the header", "CPU0 CPU0\nNET_TX: 1 1\nNET_RX: 1 1\n", nil, true},
		{"a row twice", "CPU0\nNET_TX: 1\nNET_RX: 1\nNET_RX: 2\n", nil, true},
		{"empty", "", nil, true},
	}
	for _, c := range cases {
		got, err := parseNetSoftirqs(c.text)
		if (err != nil) != c.wantErr || (!c.wantErr && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%s: got %+v, %v; want %+v, err %v", c.name, got, err, c.want, c.wantErr)
		}
	}
}

func TestKernel(t *testing.T) {
	a, err := ParseKernel(stat2, softirqs2)
	if err != nil {
		t.Fatal(err)
	}
	// One second on two cores later: core 0 spent 60 % in softirq, core 1 10 %.
	statB := "cpu 0 0 0 0\n" +
		"cpu0 120 10 60 800 5 3 90 2 0 0\n" + // +20 user, +10 sys, +2 irq, +60 softirq, +0 idle... total +92
		"cpu1 250 10 100 820 5 5 20 7 0 0\n" // +50 user, +20 sys, +10 softirq, +20 idle, +5 steal: total +105
	irqB := "CPU0 CPU1\nNET_TX: 80 61\nNET_RX: 9000 3100\n"
	b, err := ParseKernel(statB, irqB)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		a, b   *KernelSnapshot
		pinned []int
		want   *record.CellKernel
	}{
		{"all cores", a, b, nil, &record.CellKernel{CPUSeconds: 1.97, UserSeconds: 0.7, SystemSeconds: 0.3, IRQSeconds: 0.02,
			SoftirqSeconds: 0.7, BusiestCore: 0, BusiestSoftirqPercent: 65.22, NetRX: 2100, NetTX: 31, Bytes: 1e9}},
		{"pinned to core 1", a, b, []int{1}, &record.CellKernel{CPUSeconds: 1.97, UserSeconds: 0.7, SystemSeconds: 0.3, IRQSeconds: 0.02,
			SoftirqSeconds: 0.7, BusiestCore: 0, BusiestSoftirqPercent: 65.22, NetRX: 2100, NetTX: 31, Bytes: 1e9,
			Pinned: &record.CellKernel{Cores: []int{1}, CPUSeconds: 1.05, UserSeconds: 0.5, SystemSeconds: 0.2, SoftirqSeconds: 0.1,
				BusiestCore: 1, BusiestSoftirqPercent: 9.52, NetRX: 100, NetTX: 1}}},
		{"pinned to a core the machine lacks", a, b, []int{7}, &record.CellKernel{CPUSeconds: 1.97, UserSeconds: 0.7, SystemSeconds: 0.3, IRQSeconds: 0.02,
			SoftirqSeconds: 0.7, BusiestCore: 0, BusiestSoftirqPercent: 65.22, NetRX: 2100, NetTX: 31, Bytes: 1e9}},
		{"no tick passed", a, a, nil, nil},
		{"no second snapshot", a, nil, nil, nil},
		// Counters that went back (a core off and on) add nothing.
		{"backwards", b, a, nil, nil},
	}
	for _, c := range cases {
		got := Kernel(c.a, c.b, 1e9, c.pinned)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
			if got != nil && c.want != nil {
				t.Errorf("pinned: got %+v want %+v", got.Pinned, c.want.Pinned)
			}
		}
	}
}

// The machine's own files parse, and name at least one core.
func TestParseKernelHere(t *testing.T) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Skip(err)
	}
	irqs, err := os.ReadFile("/proc/softirqs")
	if err != nil {
		t.Skip(err)
	}
	k, err := ParseKernel(string(stat), string(irqs))
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Cores) == 0 || len(k.Softirqs) == 0 {
		t.Fatalf("no cores: %+v", k)
	}
	for n := range k.Softirqs {
		if _, ok := k.Cores[n]; !ok {
			t.Errorf("core %d in /proc/softirqs, not in /proc/stat", n)
		}
	}
}

// Whatever the files hold, the parsers return an error or counters, and
// Kernel sums them without a panic and within the cores' capacity.
func FuzzParseKernel(f *testing.F) {
	f.Add(stat2, softirqs2)
	f.Add("cpu0 1 2 3 4\n", "CPU0\nNET_TX: 1\nNET_RX: 2\n")
	f.Add("cpu18446744073709551615 1 2 3 4\n", "CPU0 CPU1\nNET_TX: 18446744073709551615 0\nNET_RX: 1 1\n")
	f.Add("cpu0 "+strings.Repeat("1 ", 20)+"\n", "CPU0\n\n\nNET_RX: 1\nNET_TX: 1\n")
	f.Fuzz(func(t *testing.T, stat, irqs string) {
		k, err := ParseKernel(stat, irqs)
		if err != nil {
			return
		}
		zero := &KernelSnapshot{Cores: map[int]CoreTicks{}, Softirqs: map[int]NetSoftirqs{}}
		for n := range k.Cores {
			zero.Cores[n] = CoreTicks{}
		}
		got := Kernel(zero, k, -5, []int{0})
		if got == nil {
			return
		}
		if got.Bytes != 0 {
			t.Errorf("negative bytes kept: %d", got.Bytes)
		}
		sum := got.UserSeconds + got.SystemSeconds + got.IRQSeconds + got.SoftirqSeconds
		if sum > got.CPUSeconds*(1+1e-9)+1e-6 || got.BusiestSoftirqPercent < 0 || got.BusiestSoftirqPercent > 100 {
			t.Errorf("parts %v past capacity %v, or share %v", sum, got.CPUSeconds, got.BusiestSoftirqPercent)
		}
	})
}
