package udp

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

func TestJitter(t *testing.T) {
	ms := time.Millisecond
	// D: 2, 1, 4 ms. J1 = 2/16 = 0.125; J2 = 0.125 + (1 − 0.125)/16 =
	// 0.1796875; J3 = 0.1796875 + (4 − 0.1796875)/16 = 0.41845703125.
	tests := []struct {
		name    string
		transit []time.Duration
		want    float64
	}{
		{"none", nil, 0},
		{"one packet", []time.Duration{10 * ms}, 0},
		{"constant transit", []time.Duration{5 * ms, 5 * ms, 5 * ms}, 0},
		{"10 12 11 15 ms", []time.Duration{10 * ms, 12 * ms, 11 * ms, 15 * ms}, 0.41845703125},
		{"sign does not matter", []time.Duration{15 * ms, 11 * ms, 12 * ms, 10 * ms}, 0.25 + (1-0.25)/16 + (2-(0.25+(1-0.25)/16))/16},
		{"clock offset cancels", []time.Duration{-990 * ms, -988 * ms, -989 * ms, -985 * ms}, 0.41845703125},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var j Jitter
			for _, d := range tc.transit {
				j.Add(d)
			}
			if math.Abs(j.MS()-tc.want) > 1e-12 {
				t.Errorf("jitter = %.12f ms, want %.12f", j.MS(), tc.want)
			}
		})
	}
}

func TestMeterIntervals(t *testing.T) {
	s := time.Second
	m := NewMeter(s)
	add := func(at time.Duration, seq uint64) { m.Add(at, seq, 100, time.Millisecond) }
	// Interval 0: 0, 1, 3 (2 missing), 5 (4 missing). Interval 1: 2 (late,
	// fills interval 0's gap), 6, 6 (dup). Interval 2: nothing. Interval 3
	// (partial, to 3.5 s): 9 (7, 8 missing); sent 12: 10, 11 lost at the tail.
	add(0, 0)
	add(100*time.Millisecond, 1)
	add(200*time.Millisecond, 3)
	add(900*time.Millisecond, 5)
	add(1100*time.Millisecond, 2)
	add(1200*time.Millisecond, 6)
	add(1300*time.Millisecond, 6)
	add(3100*time.Millisecond, 9)
	m.Invalid()
	rep := m.Report(3500*time.Millisecond, 12)
	type iv struct {
		start, end                    time.Duration
		packets, lost, ooo, dups, off int64
	}
	want := []iv{
		{0, s, 4, 1, 0, 0, 0},
		{s, 2 * s, 2, 0, 1, 1, 3},
		{2 * s, 3 * s, 0, 0, 0, 0, 0},
		{3 * s, 3500 * time.Millisecond, 1, 4, 0, 0, 0},
	}
	if len(rep.Intervals) != len(want) {
		t.Fatalf("%d intervals, want %d: %+v", len(rep.Intervals), len(want), rep.Intervals)
	}
	for i, w := range want {
		g := rep.Intervals[i]
		got := iv{g.Start, g.End, g.Packets, g.Lost, g.OutOfOrder, g.Duplicates, g.OffsetSum}
		if got != w {
			t.Errorf("interval %d = %+v, want %+v", i, got, w)
		}
		if g.Bytes != 100*g.Packets {
			t.Errorf("interval %d: %d bytes for %d packets", i, g.Bytes, g.Packets)
		}
	}
	tot := rep.Total
	if tot.Packets != 7 || tot.Lost != 5 || tot.OutOfOrder != 1 || tot.Duplicates != 1 || tot.Bytes != 700 || tot.End != 3500*time.Millisecond {
		t.Errorf("total = %+v", tot)
	}
	if rep.Sent != 12 || rep.Invalid != 1 {
		t.Errorf("sent %d invalid %d, want 12 and 1", rep.Sent, rep.Invalid)
	}
	var lost int64
	for _, s := range rep.Intervals {
		lost += s.Lost
	}
	if lost != tot.Lost {
		t.Errorf("interval losses add up to %d, total %d", lost, tot.Lost)
	}
}

func TestMeterSliverFolded(t *testing.T) {
	m := NewMeter(time.Second)
	m.Add(0, 0, 10, 0)
	m.Add(999*time.Millisecond, 1, 10, 0)
	m.Add(1001*time.Millisecond, 3, 10, 0)
	rep := m.Report(1002*time.Millisecond, 5)
	if len(rep.Intervals) != 1 {
		t.Fatalf("intervals = %+v", rep.Intervals)
	}
	if iv := rep.Intervals[0]; iv.End != 1002*time.Millisecond || iv.Packets != 3 || iv.Lost != 2 || iv.Bytes != 30 {
		t.Errorf("interval = %+v", iv)
	}
}

func TestMeterTotalOnly(t *testing.T) {
	m := NewMeter(0)
	for _, s := range []uint64{0, 2, 1} {
		m.Add(time.Duration(s)*time.Second, s, 10, 0)
	}
	rep := m.Report(5*time.Second, 3)
	if len(rep.Intervals) != 0 || rep.Total.Packets != 3 || rep.Total.Lost != 0 || rep.Total.OutOfOrder != 1 {
		t.Errorf("report = %+v", rep)
	}
}

func TestRecords(t *testing.T) {
	rep := Report{
		Intervals: []Stats{{Start: 0, End: time.Second, Packets: 90, Bytes: 90_000, Lost: 10, OutOfOrder: 4, OffsetSum: 10, JitterMS: 0.5}},
		Total:     Stats{End: 2 * time.Second, Packets: 180, Bytes: 180_000, Lost: 20, OutOfOrder: 4, OffsetSum: 10, JitterMS: 0.25},
		Sent:      200, Invalid: 3,
	}
	j := JitterRecords(rep, 1000, 1_000_000)
	if j.Total.Workload != "jitter" || !j.Total.Total || j.Total.Interval != -1 || j.Total.Sent != 200 || j.Total.Invalid != 3 {
		t.Errorf("jitter total = %+v", j.Total)
	}
	if iv := j.Intervals[0]; iv.BPS != 720_000 || iv.LossPct != 10 || iv.JitterMS != 0.5 || iv.Total {
		t.Errorf("jitter interval = %+v", iv)
	}
	d := DatagramRecords(rep, 1000, 0)
	if d.Total.Workload != "datagram" || d.Total.MBPerS != 0.09 || d.Total.PacketsPerS != 90 || d.Total.SuccessRate != 0.9 || d.Total.AvgOffset != 2.5 || d.Total.ElapsedS != 2 {
		t.Errorf("datagram total = %+v", d.Total)
	}
	empty := DatagramRecords(Report{}, 1000, 0)
	if empty.Total.SuccessRate != 0 || empty.Total.MBPerS != 0 || empty.Total.AvgOffset != 0 {
		t.Errorf("empty report = %+v", empty.Total)
	}
}

func TestHeader(t *testing.T) {
	b := make([]byte, 40)
	h := Header{TestID: 7, Seq: 1<<40 + 3, SendNS: -5}
	h.Put(b)
	got, err := ParseHeader(b)
	if err != nil || got != h {
		t.Fatalf("ParseHeader = %+v, %v; want %+v", got, err, h)
	}
	if _, err := ParseHeader(b[:descriptors.UDPHeaderSize-1]); !errors.Is(err, ErrShort) {
		t.Errorf("short: %v", err)
	}
	b[0] ^= 0xff
	if _, err := ParseHeader(b); !errors.Is(err, ErrBadMagic) {
		t.Errorf("bad magic: %v", err)
	}
}

func TestDefaultPacketSize(t *testing.T) {
	for mtu, want := range map[int]int{1500: 1468, 1450: 1418, 0: 1468, -1: 1468, 9000: 8968, 65536: 65504, 70000: descriptors.MaxUDPPayload, 40: descriptors.UDPHeaderSize} {
		if got := DefaultPacketSize(mtu); got != want {
			t.Errorf("DefaultPacketSize(%d) = %d, want %d", mtu, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	j := JitterConfig{Addr: "h", Rate: 1, Size: 1470, Duration: time.Second, Interval: time.Second}
	d := DatagramConfig{Addr: "h", Count: 1}
	tests := []struct {
		name string
		err  error
		want string // "" for valid
	}{
		{"jitter ok", j.Validate(), ""},
		{"jitter no server", func() error { c := j; c.Addr = ""; return c.Validate() }(), "--server"},
		{"jitter rate 0", func() error { c := j; c.Rate = 0; return c.Validate() }(), "--bitrate 0"},
		{"jitter negative duration", func() error { c := j; c.Duration = -time.Second; return c.Validate() }(), "--time -1s"},
		{"jitter zero duration", func() error { c := j; c.Duration = 0; return c.Validate() }(), "--time 0s"},
		{"jitter size 65508", func() error { c := j; c.Size = 65508; return c.Validate() }(), "--length 65508"},
		{"jitter size below header", func() error { c := j; c.Size = 23; return c.Validate() }(), "--length 23"},
		{"jitter size 0", func() error { c := j; c.Size = 0; return c.Validate() }(), "--length 0"},
		{"jitter max size ok", func() error { c := j; c.Size = descriptors.MaxUDPPayload; return c.Validate() }(), ""},
		{"jitter tiny interval", func() error { c := j; c.Interval = time.Millisecond; return c.Validate() }(), "--interval 1ms"},
		{"jitter no intervals ok", func() error { c := j; c.Interval = 0; return c.Validate() }(), ""},
		{"datagram ok", d.Validate(), ""},
		{"datagram auto size ok", func() error { c := d; c.Size = 0; return c.Validate() }(), ""},
		{"datagram size 70000", func() error { c := d; c.Size = 70000; return c.Validate() }(), "--size 70000"},
		{"datagram negative rate", func() error { c := d; c.Rate = -1; return c.Validate() }(), "--rate -1"},
		{"datagram negative count", func() error { c := d; c.Count = -1; return c.Validate() }(), "--count -1"},
		{"datagram negative duration", func() error { c := d; c.Duration = -time.Second; return c.Validate() }(), "--time -1s"},
		{"datagram neither count nor duration", func() error { c := d; c.Count = 0; return c.Validate() }(), "--count or --time"},
		{"datagram duration only ok", func() error { c := d; c.Count = 0; c.Duration = time.Second; return c.Validate() }(), ""},
		{"jitter rate too high", func() error { c := j; c.Rate = MaxRate + 1; return c.Validate() }(), "--bitrate 10000000000001"},
		{"jitter duration too long", func() error { c := j; c.Duration = 25 * time.Hour; return c.Validate() }(), "--time 25h0m0s"},
		{"jitter interval too long", func() error { c := j; c.Interval = 2 * time.Hour; return c.Validate() }(), "--interval 2h0m0s"},
		{"datagram count too high", func() error { c := d; c.Count = MaxCount + 1; return c.Validate() }(), "--count 1099511627777"},
		{"datagram rate too high", func() error { c := d; c.Rate = MaxRate + 1; return c.Validate() }(), "--rate 10000000000001"},
		{"datagram duration too long", func() error { c := d; c.Duration = 25 * time.Hour; return c.Validate() }(), "--time 25h0m0s"},
	}
	for _, tc := range tests {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: %v", tc.name, tc.err)
		case tc.want != "" && (tc.err == nil || !strings.HasPrefix(tc.err.Error(), tc.want)):
			t.Errorf("%s: error %v, want it to start with %q", tc.name, tc.err, tc.want)
		case tc.err != nil && strings.Contains(tc.err.Error(), "\n"):
			t.Errorf("%s: error spans lines: %q", tc.name, tc.err)
		}
	}
}
