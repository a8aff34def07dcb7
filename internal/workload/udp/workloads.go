package udp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// Defaults of the two workloads.
const (
	DefaultJitterSize = 1470 // iperf's UDP datagram size
	DefaultDuration   = 10 * time.Second
	DefaultInterval   = time.Second
	WorkloadJitter    = descriptors.JitterName
	WorkloadDatagram  = descriptors.DatagramName
	// Upper bounds of what a client may ask for.
	MaxRate  = 10_000_000_000_000 // bits/s: 10 Tbit/s
	MaxCount = 1 << 40
)

// DefaultPacketSize is the datagram workload's packet size on a path of
// the given MTU (descriptors.DefaultPacketSize: mtu − 32).
func DefaultPacketSize(mtu int) int { return descriptors.DefaultPacketSize(mtu) }

func validateSize(flag string, size int, auto bool) error {
	if auto && size == 0 {
		return nil
	}
	if size < descriptors.UDPHeaderSize || size > descriptors.MaxUDPPayload {
		return fmt.Errorf("%s %d: must be between %d and %d bytes", flag, size, descriptors.UDPHeaderSize, descriptors.MaxUDPPayload)
	}
	return nil
}

func validateInterval(iv time.Duration) error {
	if iv != 0 && (iv < workload.MinInterval || iv > descriptors.UDPMaxInterval) {
		return fmt.Errorf("--interval %s: must be 0 (total only) or in [%s, %s]", iv, workload.MinInterval, descriptors.UDPMaxInterval)
	}
	return nil
}

// JitterConfig is a jitter test: UDP at a constant rate.
type JitterConfig struct {
	Addr     string        // listener, host[:port]; descriptors.UDPPort when none
	Rate     int64         // bits/s of UDP payload, > 0
	Size     int           // datagram (UDP payload) bytes
	Duration time.Duration // > 0
	Interval time.Duration // per-interval reports; 0: total only
	Dial     DialFunc      // optional
}

// Validate reports the first bad field, naming cnperf jitter's flag.
func (c JitterConfig) Validate() error {
	switch {
	case c.Addr == "":
		return errors.New("--server: give the listener's HOST[:PORT]")
	case c.Rate <= 0:
		return fmt.Errorf("--bitrate %d: must be > 0", c.Rate)
	case c.Rate > MaxRate:
		return fmt.Errorf("--bitrate %d: must be <= %d", c.Rate, int64(MaxRate))
	case c.Duration <= 0:
		return fmt.Errorf("--time %s: must be > 0", c.Duration)
	case c.Duration > workload.MaxDuration:
		return fmt.Errorf("--time %s: must be <= %s", c.Duration, workload.MaxDuration)
	}
	if err := validateSize("--length", c.Size, false); err != nil {
		return err
	}
	return validateInterval(c.Interval)
}

// DatagramConfig is a datagram test in the style of Coherence's Datagram
// Test: fixed-size packets, as fast as allowed, until a count or a duration.
type DatagramConfig struct {
	Addr     string
	Size     int           // packet bytes; 0: DefaultPacketSize of the route's MTU
	Rate     int64         // bits/s of UDP payload; 0: as fast as possible
	Count    int64         // packets to send; 0: until Duration
	Duration time.Duration // 0: until Count
	Interval time.Duration // 0: total only
	Dial     DialFunc
}

// Validate reports the first bad field, naming cnperf datagram's flag.
func (c DatagramConfig) Validate() error {
	switch {
	case c.Addr == "":
		return errors.New("--server: give the listener's HOST[:PORT]")
	case c.Rate < 0:
		return fmt.Errorf("--rate %d: must be >= 0 (0: as fast as possible)", c.Rate)
	case c.Rate > MaxRate:
		return fmt.Errorf("--rate %d: must be <= %d (0: as fast as possible)", c.Rate, int64(MaxRate))
	case c.Count < 0:
		return fmt.Errorf("--count %d: must be >= 0", c.Count)
	case c.Count > MaxCount:
		return fmt.Errorf("--count %d: must be <= %d", c.Count, int64(MaxCount))
	case c.Duration < 0:
		return fmt.Errorf("--time %s: must be >= 0", c.Duration)
	case c.Duration > workload.MaxDuration:
		return fmt.Errorf("--time %s: must be <= %s", c.Duration, workload.MaxDuration)
	case c.Count == 0 && c.Duration == 0:
		return errors.New("--count or --time: give at least one")
	}
	if err := validateSize("--size", c.Size, true); err != nil {
		return err
	}
	return validateInterval(c.Interval)
}

// JitterRecord is one interval, or the whole, of a jitter test as the
// listener measured it. The runner fills Mode, Labels and Cell.
type JitterRecord struct {
	Workload   string            `json:"workload"` // always "jitter"
	Mode       string            `json:"mode,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Cell       int               `json:"cell"`
	Total      bool              `json:"total"`    // the whole test, not one interval
	Interval   int               `json:"interval"` // index from 0; -1 for the total
	StartS     float64           `json:"start_s"`  // since the test started
	EndS       float64           `json:"end_s"`
	Size       int               `json:"size"`       // datagram bytes
	TargetBPS  int64             `json:"target_bps"` // the rate asked for
	Bytes      int64             `json:"bytes"`      // UDP payload received
	BPS        float64           `json:"bps"`        // achieved: payload bits received per second
	Packets    int64             `json:"packets"`    // distinct datagrams received
	Lost       int64             `json:"lost"`
	LossPct    float64           `json:"loss_pct"` // lost / (packets + lost) × 100
	OutOfOrder int64             `json:"out_of_order"`
	Duplicates int64             `json:"duplicates"`
	JitterMS   float64           `json:"jitter_ms"`         // RFC 3550, at the end of the interval
	Sent       int64             `json:"sent,omitempty"`    // total only: datagrams sent
	Invalid    int64             `json:"invalid,omitempty"` // total only: datagrams ignored
}

// DatagramRecord is one interval, or the whole, of a datagram test as the
// listener measured it, with Coherence's Datagram Test's figures.
type DatagramRecord struct {
	Workload    string            `json:"workload"` // always "datagram"
	Mode        string            `json:"mode,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Cell        int               `json:"cell"`
	Total       bool              `json:"total"`
	Interval    int               `json:"interval"` // index from 0; -1 for the total
	StartS      float64           `json:"start_s"`
	ElapsedS    float64           `json:"elapsed_s"`
	PacketSize  int               `json:"packet_size"`
	TargetBPS   int64             `json:"target_bps"` // 0: as fast as possible
	Bytes       int64             `json:"bytes"`
	MBPerS      float64           `json:"mb_per_s"` // 10^6 bytes of payload per second
	PacketsPerS float64           `json:"packets_per_s"`
	Received    int64             `json:"received"`
	Missing     int64             `json:"missing"`
	SuccessRate float64           `json:"success_rate"` // received / (received + missing), 0..1
	OutOfOrder  int64             `json:"out_of_order"`
	AvgOffset   float64           `json:"avg_offset"` // mean distance of out-of-order packets behind the highest
	Duplicates  int64             `json:"duplicates"`
	Sent        int64             `json:"sent,omitempty"`
	Invalid     int64             `json:"invalid,omitempty"`
}

// JitterResult is a jitter test's records.
type JitterResult struct {
	Intervals []JitterRecord `json:"intervals"`
	Total     JitterRecord   `json:"total"`
}

// DatagramResult is a datagram test's records.
type DatagramResult struct {
	Intervals []DatagramRecord `json:"intervals"`
	Total     DatagramRecord   `json:"total"`
}

func per(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// JitterRecords turns a listener's report into jitter records.
func JitterRecords(rep Report, size int, target int64) JitterResult {
	mk := func(i int, s Stats) JitterRecord {
		return JitterRecord{
			Workload: WorkloadJitter, Interval: i, Total: i < 0,
			StartS: s.Start.Seconds(), EndS: s.End.Seconds(), Size: size, TargetBPS: target,
			Bytes: s.Bytes, BPS: per(float64(s.Bytes)*8, s.End-s.Start), Packets: s.Packets,
			Lost: s.Lost, LossPct: 100 * ratio(s.Lost, s.Packets+s.Lost),
			OutOfOrder: s.OutOfOrder, Duplicates: s.Duplicates, JitterMS: s.JitterMS,
		}
	}
	var r JitterResult
	for i, s := range rep.Intervals {
		r.Intervals = append(r.Intervals, mk(i, s))
	}
	r.Total = mk(-1, rep.Total)
	r.Total.Sent, r.Total.Invalid = rep.Sent, rep.Invalid
	return r
}

// DatagramRecords turns a listener's report into datagram records.
func DatagramRecords(rep Report, size int, target int64) DatagramResult {
	mk := func(i int, s Stats) DatagramRecord {
		d := s.End - s.Start
		return DatagramRecord{
			Workload: WorkloadDatagram, Interval: i, Total: i < 0,
			StartS: s.Start.Seconds(), ElapsedS: d.Seconds(), PacketSize: size, TargetBPS: target,
			Bytes: s.Bytes, MBPerS: per(float64(s.Bytes)/1e6, d), PacketsPerS: per(float64(s.Packets), d),
			Received: s.Packets, Missing: s.Lost, SuccessRate: ratio(s.Packets, s.Packets+s.Lost),
			OutOfOrder: s.OutOfOrder, AvgOffset: ratio(s.OffsetSum, s.OutOfOrder), Duplicates: s.Duplicates,
		}
	}
	var r DatagramResult
	for i, s := range rep.Intervals {
		r.Intervals = append(r.Intervals, mk(i, s))
	}
	r.Total = mk(-1, rep.Total)
	r.Total.Sent, r.Total.Invalid = rep.Sent, rep.Invalid
	return r
}

// RunJitter runs a jitter test against the listener at c.Addr. When ctx ends
// early it returns what the listener measured so far with ctx's error.
func RunJitter(ctx context.Context, c JitterConfig) (JitterResult, error) {
	if err := c.Validate(); err != nil {
		return JitterResult{}, err
	}
	rep, size, err := run(ctx, flow{workload: WorkloadJitter, addr: c.Addr, size: c.Size, rate: c.Rate,
		duration: c.Duration, interval: c.Interval, dial: c.Dial})
	if rep == nil {
		return JitterResult{}, err
	}
	return JitterRecords(*rep, size, c.Rate), err
}

// RunDatagram runs a datagram test against the listener at c.Addr. When ctx
// ends early it returns what the listener measured so far with ctx's error.
func RunDatagram(ctx context.Context, c DatagramConfig) (DatagramResult, error) {
	if err := c.Validate(); err != nil {
		return DatagramResult{}, err
	}
	rep, size, err := run(ctx, flow{workload: WorkloadDatagram, addr: c.Addr, size: c.Size, rate: c.Rate,
		count: c.Count, duration: c.Duration, interval: c.Interval, dial: c.Dial})
	if rep == nil {
		return DatagramResult{}, err
	}
	return DatagramRecords(*rep, size, c.Rate), err
}
