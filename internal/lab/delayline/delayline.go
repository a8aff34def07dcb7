// Package delayline is cnperf's user-space delay line: it joins two zones'
// underlay switches where the kernel has no netem. It reads every frame
// that arrives on one zone's device (a raw packet socket, recvmmsg), holds
// it for the delay (with jitter, and drops a share on purpose for loss) in
// a queue bounded by the bandwidth-delay product, and writes it out of the
// other zone's device when due (sendmmsg); both ways, each on a thread of
// its own that sleeps in ppoll until shortly before the next frame is due
// (then spins) or until one arrives.
// A frame that finds the queue full is dropped and counted: the line never
// slows the link to keep up. It counts how late frames leave against their
// due time, its own added latency.
package delayline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/record"
)

// Config says what the line joins and how it delays.
type Config struct {
	// Local and Remote are the devices towards the first and second zone,
	// in the namespace the line runs in.
	Local  string `json:"local"`
	Remote string `json:"remote"`
	// Delay is one way, each way; Jitter spreads it uniformly in
	// ±Jitter (frames still leave in order); LossPercent of the frames
	// are dropped each way.
	Delay       time.Duration `json:"delay_ns"`
	Jitter      time.Duration `json:"jitter_ns,omitempty"`
	LossPercent float64       `json:"loss_percent,omitempty"`
	// QueueBytes bounds what each way holds.
	QueueBytes int `json:"queue_bytes"`
	// Stats is a file the counters are written to, JSON, every second
	// and at the end ("" for none); it appears once the line is ready.
	Stats string `json:"stats,omitempty"`
	// Seed seeds jitter and loss (0: a random seed).
	Seed uint64 `json:"seed,omitempty"`
}

// Bounds of a configuration.
const (
	MaxDelay      = time.Hour
	MinQueueBytes = 2 * maxFrame
	MaxQueueBytes = 2 << 30
)

var devRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,15}$`)

// Validate names the first bad field.
func (c Config) Validate() error {
	for _, d := range []struct{ name, v string }{{"local", c.Local}, {"remote", c.Remote}} {
		if !devRE.MatchString(d.v) {
			return fmt.Errorf("%s %q: want a device name (1-15 of letters, digits, _ . -)", d.name, d.v)
		}
	}
	switch {
	case c.Local == c.Remote:
		return fmt.Errorf("remote %q: the same device as local", c.Remote)
	case c.Delay < 0 || c.Delay > MaxDelay:
		return fmt.Errorf("delay_ns %d: want 0 to %d (an hour)", c.Delay, MaxDelay)
	case c.Jitter < 0 || c.Jitter > c.Delay:
		return fmt.Errorf("jitter_ns %d: want 0 to the delay", c.Jitter)
	case !(c.LossPercent >= 0 && c.LossPercent < 100):
		return fmt.Errorf("loss_percent %g: want [0, 100)", c.LossPercent)
	case c.QueueBytes < MinQueueBytes || c.QueueBytes > MaxQueueBytes:
		return fmt.Errorf("queue_bytes %d: want %d to %d", c.QueueBytes, MinQueueBytes, MaxQueueBytes)
	}
	return nil
}

// JSON is the configuration as `cnperf serve delayline --config` takes it.
func (c Config) JSON() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// ParseConfig reads a configuration: one JSON object, no unknown fields,
// valid.
func ParseConfig(s string) (Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("parse: %w", err)
	}
	if dec.More() {
		return Config{}, errors.New("parse: more than one JSON value")
	}
	return c, c.Validate()
}

// Line is a delay line whose sockets are open.
type Line struct {
	cfg   Config
	ports [2]*port
	dirs  [2]*direction
}

// zoneNames name the two sides in the counters.
var zoneNames = [2]string{"local", "remote"}

// Open opens the line's sockets on both devices, in the calling thread's
// network namespace; Run then moves frames from any thread.
func Open(c Config) (*Line, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	l := &Line{cfg: c}
	for i, dev := range []string{c.Local, c.Remote} {
		p, err := openPort(dev)
		if err != nil {
			l.close()
			return nil, err
		}
		l.ports[i] = p
	}
	seed := c.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	start := time.Now()
	for i := range l.dirs {
		l.dirs[i] = &direction{
			from: zoneNames[i], to: zoneNames[1-i],
			rx: l.ports[i], tx: l.ports[1-i],
			q:     newQueue(c.QueueBytes, c.QueueBytes/60+1), // 60 bytes: the smallest Ethernet frame
			delay: int64(c.Delay), jitter: int64(c.Jitter), loss: c.LossPercent / 100,
			rng:   rand.New(rand.NewPCG(seed, uint64(i))),
			start: start, rxb: newRxBatch(), txb: newTxBatch(), early: earlyFirst,
		}
	}
	return l, nil
}

func (l *Line) close() {
	for _, p := range l.ports {
		if p != nil {
			_ = p.close()
		}
	}
}

// Run moves frames both ways until ctx ends, then writes the counters a
// last time and closes the sockets. An error is a socket that failed.
func (l *Line) Run(ctx context.Context) error {
	defer l.close()
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	defer unix.Close(stop)
	if err := l.writeStats(); err != nil {
		return err
	}
	errc := make(chan error, len(l.dirs))
	for _, d := range l.dirs {
		go func() { errc <- d.run(stop) }()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var runErr error
	running := len(l.dirs)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-errc:
			running--
			runErr = err
			break loop
		case <-tick.C:
			if err := l.writeStats(); err != nil {
				runErr = err
				break loop
			}
		}
	}
	for _, d := range l.dirs {
		d.stopped.Store(true)
	}
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	if _, err := unix.Write(stop, one); err != nil {
		return fmt.Errorf("stop the line: %w", err)
	}
	for ; running > 0; running-- {
		if err := <-errc; err != nil && runErr == nil {
			runErr = err
		}
	}
	return errors.Join(runErr, l.writeStats())
}

// Stats returns the counters, one per way: local to remote first.
func (l *Line) Stats() []record.ZoneDirection {
	out := make([]record.ZoneDirection, len(l.dirs))
	for i, d := range l.dirs {
		out[i] = d.snapshot()
	}
	return out
}

// writeStats replaces the stats file, so that a reader never sees half.
func (l *Line) writeStats() error {
	if l.cfg.Stats == "" {
		return nil
	}
	b, err := json.Marshal(l.Stats())
	if err != nil {
		return err
	}
	tmp := l.cfg.Stats + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	if err := os.Rename(tmp, l.cfg.Stats); err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	return nil
}

// ReadStats reads the counters a line wrote to its stats file.
func ReadStats(path string) ([]record.ZoneDirection, error) {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	var out []record.ZoneDirection
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("delay line stats %s: %w", path, err)
	}
	return out, nil
}

// direction is one way through the line, run by one thread.
type direction struct {
	from, to string
	rx, tx   *port
	q        *queue
	delay    int64
	jitter   int64
	loss     float64
	rng      *rand.Rand
	start    time.Time
	rxb      *rxBatch
	txb      *txBatch
	// early is how long before a frame is due a sleep ends (learnOvershoot).
	early int64

	// stopped ends run even while it spins.
	stopped atomic.Bool
	// local counts since the last publish; mu guards shared.
	local  counts
	mu     sync.Mutex
	shared counts
}

type counts struct {
	frames, bytes, lost, dropped, truncated, sendFailed uint64
	peak                                                int
	late                                                lateHist
	dirty                                               bool
}

func (d *direction) now() int64 { return int64(time.Since(d.start)) }

// run is the direction's loop: sleep until a frame arrives or the oldest
// is due, take in all that arrived, send all that is due.
func (d *direction) run(stop int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Sleeps end when asked, not up to 50 µs later (the default slack).
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	fds := []unix.PollFd{{Fd: int32(d.rx.fd), Events: unix.POLLIN}, {Fd: int32(stop), Events: unix.POLLIN}}
	for !d.stopped.Load() {
		var ts *unix.Timespec
		sleep := true
		var wake int64 // when a timed sleep should end
		if _, due, ok := d.q.head(); ok {
			if left := due - d.now(); left > d.early {
				t := unix.NsecToTimespec(left - d.early)
				ts, wake = &t, due-d.early
			} else {
				sleep = false // spin: a sleep this short would overshoot
			}
		}
		if sleep {
			n, err := unix.Ppoll(fds, ts, nil)
			if err != nil && err != unix.EINTR {
				return fmt.Errorf("%s to %s: ppoll: %w", d.from, d.to, err)
			}
			if fds[1].Revents != 0 {
				break
			}
			if n == 0 && ts != nil {
				d.learnOvershoot(d.now() - wake)
			}
		}
		if err := d.receive(); err != nil {
			return fmt.Errorf("%s to %s: %w", d.from, d.to, err)
		}
		if err := d.sendDue(); err != nil {
			return fmt.Errorf("%s to %s: %w", d.from, d.to, err)
		}
		d.publish()
	}
	d.publish()
	return nil
}

// A sleep ends late: here by 50 to 90 µs (median; hundreds of µs at the
// 90th percentile). A frame must leave neither that late nor early, so the
// line wakes early by what its sleeps overshot lately (a moving average,
// plus a margin) and spins the rest, reading what arrives meanwhile: the
// least spinning that keeps most frames on time.
const (
	earlyFirst  = int64(100 * time.Microsecond)
	earlyMargin = int64(10 * time.Microsecond)
	earlyMin    = int64(10 * time.Microsecond)
	earlyMax    = int64(time.Millisecond)
)

// learnOvershoot moves the early wake towards the overshoot just seen
// plus the margin, by an eighth.
func (d *direction) learnOvershoot(over int64) {
	d.early += (max(over, 0) + earlyMargin - d.early) / 8
	d.early = min(max(d.early, earlyMin), earlyMax)
}

// receive queues what arrived, a few batches at most so that due frames
// are not held up behind a flood.
func (d *direction) receive() error {
	for range 8 {
		n, err := d.rxb.recv(d.rx.fd)
		if err != nil || n == 0 {
			return err
		}
		now := d.now()
		for i := range n {
			f, outgoing, truncated := d.rxb.frame(i)
			switch {
			case outgoing || len(f) <= vnetHdrLen:
				continue
			case truncated:
				d.local.truncated++
			case d.loss > 0 && d.rng.Float64() < d.loss:
				d.local.lost++
			case !d.q.push(f, now+d.delay+d.spread()):
				d.local.dropped++
			}
			d.local.dirty = true
		}
		if n < batchSize {
			return nil
		}
	}
	return nil
}

// spread draws the jitter: uniform in [-jitter, +jitter].
func (d *direction) spread() int64 {
	if d.jitter == 0 {
		return 0
	}
	return d.rng.Int64N(2*d.jitter+1) - d.jitter
}

// sendDue sends every frame that is due, in batches.
func (d *direction) sendDue() error {
	d.local.peak = max(d.local.peak, d.q.peak)
	for {
		now := d.now()
		for d.txb.n < batchSize && d.txb.n < d.q.len() {
			f, due := d.q.at(d.txb.n)
			if due > now {
				break
			}
			// The checksum was checked on the way in; the receiver need
			// not take the line's word for it.
			f[0] &^= unix.VIRTIO_NET_HDR_F_DATA_VALID // virtio_net_hdr flags
			d.txb.add(f)
			d.local.late.add(now - due)
			d.local.bytes += uint64(len(f) - vnetHdrLen)
		}
		k := d.txb.n
		if k == 0 {
			return nil
		}
		failed, err := d.txb.send(d.tx.fd)
		for range k {
			d.q.pop()
		}
		d.local.frames += uint64(k - failed)
		d.local.sendFailed += uint64(failed)
		d.local.dirty = true
		if err != nil {
			return err
		}
		if k < batchSize {
			return nil
		}
	}
}

// publish hands the counters since the last publish to readers.
func (d *direction) publish() {
	if !d.local.dirty {
		return
	}
	d.mu.Lock()
	s := &d.shared
	s.frames += d.local.frames
	s.bytes += d.local.bytes
	s.lost += d.local.lost
	s.dropped += d.local.dropped
	s.truncated += d.local.truncated
	s.sendFailed += d.local.sendFailed
	s.peak = max(s.peak, d.local.peak)
	s.late.merge(&d.local.late)
	d.mu.Unlock()
	d.local = counts{}
}

func (d *direction) snapshot() record.ZoneDirection {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &d.shared
	return record.ZoneDirection{From: d.from, To: d.to, Frames: s.frames, Bytes: s.bytes, Lost: s.lost,
		Dropped: s.dropped, Truncated: s.truncated, SendFailed: s.sendFailed, PeakQueueBytes: s.peak,
		LateMedian: s.late.quantile(0.5), LateP99: s.late.quantile(0.99), LateMax: time.Duration(s.late.max)}
}
