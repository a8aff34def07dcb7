package stream

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
	"github.com/cnperf/cnperf/internal/workload/udpseq"
)

// Run runs one test against the server at cfg.Addr. It calls emit (from one
// goroutine at a time) with each sender-side interval as it ends and, at the
// end, with the receiver-side intervals the server reports: per stream when
// there are several, and always their sum (Stream -1).
//
// When ctx ends during the test, Run stops sending, fetches the server's
// numbers for what was sent and returns them with ctx's error.
func Run(ctx context.Context, cfg Config, emit func(Interval)) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
	if cfg.Protocol == "tcp" && (cfg.Rate == 0 || cfg.Rate >= descriptors.StreamUnlimitedRate) {
		// The server reads with as many threads as the client sends with.
		cfg.Threads = cfg.threads()
	}
	if emit == nil {
		emit = func(Interval) {}
	}
	dial := cfg.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	r := &runner{cfg: cfg, dial: dial, emit: emit}
	return r.run(ctx)
}

type runner struct {
	cfg  Config
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	emit func(Interval)
}

// counter is one stream's running totals, written by its sender and read by
// the interval clock; padded to its own cache line.
type counter struct {
	bytes   atomic.Int64
	packets atomic.Int64
	_       [48]byte
}

func (r *runner) run(ctx context.Context) (Result, error) {
	cfg := r.cfg
	var cookie [cookieLen]byte
	_, _ = rand.Read(cookie[:])
	ctxErr := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}

	// Set up: control connection, request, data connections, start.
	dctx, cancel := context.WithTimeout(ctx, serverkit.ControlTimeout)
	defer cancel()
	ctl, err := r.dial(dctx, "tcp", cfg.Addr)
	if err != nil {
		return Result{}, ctxErr(fmt.Errorf("connect to %s: %w", cfg.Addr, err))
	}
	defer ctl.Close()
	// The server's answers are bounded (maxBinCells records); so is what
	// this client reads of them.
	dec := json.NewDecoder(io.LimitReader(ctl, maxAnswer))
	enc := json.NewEncoder(ctl)
	unblock := context.AfterFunc(ctx, func() { _ = ctl.SetDeadline(time.Unix(1, 0)) })
	_ = ctl.SetDeadline(time.Now().Add(serverkit.ControlTimeout))
	expect := func(typ string) error {
		var m message
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("server %s: %w", cfg.Addr, err)
		}
		switch {
		case m.Type == "error" && m.Busy:
			return ErrBusy
		case m.Type == "error":
			return fmt.Errorf("server %s: %s", cfg.Addr, m.Error)
		case m.Type != typ:
			return fmt.Errorf("server %s: got %q, want %q", cfg.Addr, m.Type, typ)
		}
		return nil
	}
	if err := enc.Encode(testMessage(cfg, cookie)); err != nil {
		unblock()
		return Result{}, ctxErr(fmt.Errorf("server %s: %w", cfg.Addr, err))
	}
	if err := expect("accept"); err != nil {
		unblock()
		return Result{}, ctxErr(err)
	}
	conns := make([]net.Conn, 0, cfg.Parallel)
	closeConns := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	defer closeConns()
	for i := range cfg.Parallel {
		c, err := r.dial(dctx, cfg.Protocol, cfg.Addr)
		if err != nil {
			unblock()
			return Result{}, ctxErr(fmt.Errorf("open stream %d: %w", i, err))
		}
		conns = append(conns, c)
		if cfg.Protocol == "tcp" {
			var h [dataHeaderLen]byte
			h[0] = dataMagic
			copy(h[1:], cookie[:])
			binary.BigEndian.PutUint32(h[1+cookieLen:], uint32(i))
			_ = c.SetWriteDeadline(time.Now().Add(serverkit.ControlTimeout))
			if _, err := c.Write(h[:]); err != nil {
				unblock()
				return Result{}, ctxErr(fmt.Errorf("open stream %d: %w", i, err))
			}
		}
	}
	if err := enc.Encode(message{Type: "start"}); err != nil {
		unblock()
		return Result{}, ctxErr(fmt.Errorf("server %s: %w", cfg.Addr, err))
	}
	if err := expect("started"); err != nil {
		unblock()
		return Result{}, ctxErr(err)
	}
	if !unblock() {
		return Result{}, ctx.Err()
	}

	// Send.
	t0 := time.Now()
	end := t0.Add(cfg.Omit + cfg.Duration)
	for _, c := range conns {
		_ = c.SetWriteDeadline(end)
	}
	ctrs := make([]counter, cfg.Parallel)
	stopCh := make(chan struct{})
	var stopOnce sync.Once
	stopAll := func() {
		stopOnce.Do(func() {
			close(stopCh)
			for _, c := range conns {
				_ = c.SetWriteDeadline(time.Unix(1, 0))
			}
		})
	}
	interrupted := context.AfterFunc(ctx, stopAll)
	id := binary.BigEndian.Uint32(cookie[:4])
	errs := make([]error, cfg.Parallel)
	seqs := make([]uint64, cfg.Parallel)
	var wg sync.WaitGroup
	writersDone := make(chan struct{})
	sndbuf := sendBuffer(conns)
	var loop *tcpLoop
	var buf []byte
	gso := 0
	if cfg.Protocol == "tcp" && (cfg.Rate == 0 || cfg.Rate >= descriptors.StreamUnlimitedRate) {
		buf = make([]byte, cfg.Length)
		loop = newTCPLoop(conns, buf, !cfg.Copy, cfg.Threads)
	}
	var stops []*atomic.Bool // the loops' flags, set when interrupted
	if loop != nil {
		wg.Go(func() { loop.run(buf, ctrs, end, errs) })
		stops = append(stops, &loop.stop)
	} else if blasts := r.udpBlasts(conns); blasts != nil {
		gso = blasts[0].gso
		for i, b := range blasts {
			wg.Go(func() {
				seqs[i], errs[i] = b.run(id, i, cfg.Length, &ctrs[i], t0, end)
				b.close()
			})
			stops = append(stops, &b.stop)
		}
	} else {
		for i, c := range conns {
			wg.Go(func() { seqs[i], errs[i] = r.send(c, i, id, &ctrs[i], t0, end, stopCh) })
		}
	}
	go func() { wg.Wait(); close(writersDone) }()
	go func() {
		select {
		case <-stopCh: // interrupted
			for _, s := range stops {
				s.Store(true)
			}
		case <-writersDone:
		}
	}()

	edges := boundaries(cfg.Omit, cfg.Duration, cfg.Interval)
	nOmit := omitBins(edges, cfg.Omit)
	clock := &senderClock{r: r, conns: conns, loop: loop, ctrs: ctrs, nOmit: nOmit,
		prevBytes: make([]int64, cfg.Parallel), prevPkts: make([]int64, cfg.Parallel), prevRetr: make([]int64, cfg.Parallel)}
	k := 0
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
ticks:
	for ; k < len(edges)-2; k++ {
		timer.Reset(time.Until(t0.Add(edges[k+1])))
		select {
		case <-timer.C:
			clock.snap(k, time.Since(t0))
		case <-stopCh:
			break ticks
		case <-writersDone:
			break ticks
		}
	}
	<-writersDone
	elapsed := time.Since(t0)
	clock.snap(k, elapsed)
	wasInterrupted := !interrupted()
	closeConns()
	var sentFrom string
	threads := 0
	if loop != nil {
		sentFrom, threads = loop.sentFrom(), loop.threads()
	}
	if loop != nil {
		loop.close() // the receiver reads the end of the streams
	}
	conns = conns[:0]

	res := clock.result(cfg)
	res.SendBuffer = sndbuf
	res.UDPGSO = gso
	res.Threads = threads
	res.IO = "netpoller"
	if loop != nil || gso > 0 {
		res.IO = "loop"
	}
	if cfg.Protocol == "tcp" {
		res.Send, res.SendFile = "write", sentFrom
		if sentFrom != "" {
			res.Send = "sendfile"
		}
	}
	var streamErr error
	for i, err := range errs {
		if err != nil {
			streamErr = fmt.Errorf("stream %d: %w", i, err)
			break
		}
	}
	finish := func(err error) (Result, error) {
		if wasInterrupted {
			return res, ctx.Err()
		}
		if streamErr != nil {
			return res, streamErr
		}
		return res, err
	}

	// Fetch the receiver's numbers; bounded by deadlines, not by ctx, so an
	// interrupted test still gets them.
	_ = ctl.SetDeadline(time.Now().Add(udpDrain + endGrace + serverkit.ControlTimeout))
	done := message{Type: "done", ElapsedNS: int64(elapsed)}
	if cfg.Protocol == "udp" {
		done.Sent = seqs
	}
	if err := enc.Encode(done); err != nil {
		return finish(fmt.Errorf("server %s: %w", cfg.Addr, err))
	}
	var m message
	if err := dec.Decode(&m); err != nil {
		return finish(fmt.Errorf("server %s: results: %w", cfg.Addr, err))
	}
	if m.Type == "error" {
		return finish(fmt.Errorf("server %s: %s", cfg.Addr, m.Error))
	}
	if err := r.receiverSide(m, &res); err != nil {
		return finish(fmt.Errorf("server %s: %w", cfg.Addr, err))
	}
	return finish(nil)
}

// sendBuffer is the first stream's socket send buffer (SO_SNDBUF: the
// kernel's default or autotuned size, as cnperf sets none, like iperf3
// without -w); 0 if unknown.
func sendBuffer(conns []net.Conn) int {
	n := 0
	if len(conns) > 0 {
		serverkit.Control(conns[0], func(fd uintptr) { n, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF) })
	}
	return n
}

// udpBlasts takes over the UDP streams of an unlimited test for udpBlast;
// nil (conns untouched) when the test is not one, or a conn has no
// descriptor.
func (r *runner) udpBlasts(conns []net.Conn) []*udpBlast {
	cfg := r.cfg
	if cfg.Protocol != "udp" || cfg.Rate < descriptors.StreamUnlimitedRate {
		return nil
	}
	for _, c := range conns {
		if _, ok := c.(syscall.Conn); !ok {
			return nil
		}
	}
	var bs []*udpBlast
	for _, c := range conns {
		b := newUDPBlast(c, cfg.Length, !cfg.NoGSO)
		if b == nil {
			break // conns already taken over are closed; the test fails below
		}
		bs = append(bs, b)
	}
	return bs
}

// send runs one stream until end (its write deadline) or stop; it returns
// the number of UDP datagrams it numbered and the error that ended it, if
// not the deadline.
func (r *runner) send(c net.Conn, stream int, id uint32, ctr *counter, t0, end time.Time, stop <-chan struct{}) (uint64, error) {
	cfg := r.cfg
	buf := make([]byte, cfg.Length)
	udp := cfg.Protocol == "udp"
	if udp {
		binary.BigEndian.PutUint32(buf[16:20], id)
		binary.BigEndian.PutUint32(buf[20:24], uint32(stream))
	}
	var p *udpseq.Pacer
	if cfg.Rate > 0 && cfg.Rate < descriptors.StreamUnlimitedRate {
		p = newPacer(t0, cfg.Rate, cfg.Length)
	}
	sleep := time.NewTimer(time.Hour)
	defer sleep.Stop()
	var seq uint64
	for {
		if p != nil || udp {
			now := time.Now()
			if !now.Before(end) {
				return seq, nil
			}
			if p != nil {
				if d := p.Wait(now); d > 0 {
					sleep.Reset(min(d, end.Sub(now)))
					select {
					case <-sleep.C:
					case <-stop:
						return seq, nil
					}
					continue
				}
				p.Sent()
			}
			if udp {
				binary.BigEndian.PutUint64(buf[0:8], seq)
				binary.BigEndian.PutUint64(buf[8:16], uint64(now.UnixNano()))
			}
		}
		n, err := c.Write(buf)
		if udp {
			seq++
			if err == nil {
				ctr.packets.Add(1)
				ctr.bytes.Add(int64(n))
				continue
			}
			if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.EAGAIN) {
				continue // not delivered: the receiver counts it lost
			}
		} else {
			ctr.bytes.Add(int64(n))
			if err == nil {
				continue
			}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return seq, nil
		}
		return seq, err
	}
}

// pacerBurst caps a pacer's credit at a few milliseconds' worth (at least
// one write), so a late wake-up sends a short burst and a slow path does not
// build up a backlog.
const pacerBurst = 4 * time.Millisecond

// newPacer paces writes of n bytes at bitsPerSec from t0, with no minimum
// sleep.
func newPacer(t0 time.Time, bitsPerSec int64, n int) *udpseq.Pacer {
	return udpseq.NewPacer(t0, bitsPerSec, n, pacerBurst, 0)
}

// omitBins is the number of bins in the warm-up.
func omitBins(edges []time.Duration, omit time.Duration) int {
	n := 0
	for n < len(edges)-1 && edges[n] < omit {
		n++
	}
	return n
}

// senderClock turns the streams' counters into sender-side intervals.
type senderClock struct {
	r                             *runner
	conns                         []net.Conn
	loop                          *tcpLoop // when it drives the streams, conns are closed
	ctrs                          []counter
	nOmit                         int
	prevT                         time.Duration
	prevBytes, prevPkts, prevRetr []int64
	sums                          []Interval
}

func (s *senderClock) snap(k int, now time.Duration) {
	cfg := s.r.cfg
	sum := Interval{Stream: StreamSum}
	for i := range s.ctrs {
		b, p := s.ctrs[i].bytes.Load(), s.ctrs[i].packets.Load()
		iv := Interval{Stream: i, Bytes: b - s.prevBytes[i], Packets: p - s.prevPkts[i]}
		s.prevBytes[i], s.prevPkts[i] = b, p
		if cfg.Protocol == "tcp" {
			rt, ok := int64(0), false
			if s.loop != nil {
				rt, ok = s.loop.retransmits(i)
			} else {
				rt, ok = tcpinfo.Retransmits(s.conns[i])
			}
			if ok {
				iv.Retransmits = rt - s.prevRetr[i]
				s.prevRetr[i] = rt
			}
		}
		sum.Bytes += iv.Bytes
		sum.Packets += iv.Packets
		sum.Retransmits += iv.Retransmits
		if len(s.ctrs) > 1 {
			s.r.emit(s.fill(iv, k, now))
		}
	}
	sum = s.fill(sum, k, now)
	s.sums = append(s.sums, sum)
	s.r.emit(sum)
	s.prevT = now
}

func (s *senderClock) fill(iv Interval, k int, now time.Duration) Interval {
	iv.Workload, iv.Protocol, iv.Side = WorkloadName, s.r.cfg.Protocol, SideSender
	iv.Start, iv.End = s.prevT.Seconds(), now.Seconds()
	iv.BitsPerSecond = bitrate(iv.Bytes, iv.End-iv.Start)
	iv.Omitted = k < s.nOmit
	return iv
}

// result sums the sender side.
func (s *senderClock) result(cfg Config) Result {
	res := Result{Workload: WorkloadName, Protocol: cfg.Protocol, Streams: cfg.Parallel}
	start, end := -1.0, 0.0
	for _, iv := range s.sums {
		if iv.Omitted {
			continue
		}
		if start < 0 {
			start = iv.Start
		}
		end = iv.End
		res.SenderBytes += iv.Bytes
		res.Retransmits += iv.Retransmits
	}
	if start >= 0 {
		res.Duration = end - start
		res.SenderBitsPerSecond = bitrate(res.SenderBytes, res.Duration)
	}
	return res
}

// maxAnswer bounds the bytes a client reads from the server's control
// connection: the results of maxBinCells records take a few MB.
const maxAnswer = 64 << 20

// receiverSide emits the server's intervals and adds them to res. The
// server's intervals may be coarser than the client's (serverInterval); its
// edges say where the warm-up ends.
func (r *runner) receiverSide(m message, res *Result) error {
	cfg := r.cfg
	nb := len(m.Edges) - 1
	if nb < 1 || len(m.Streams) != cfg.Parallel {
		return errors.New("malformed results")
	}
	nOmit := 0
	for nOmit < nb && m.Edges[nOmit] < cfg.Omit.Seconds() {
		nOmit++
	}
	udp := cfg.Protocol == "udp"
	for _, st := range m.Streams {
		if len(st.Bytes) != nb || udp && (len(st.Packets) != nb || len(st.Lost) != nb || len(st.OutOfOrder) != nb) {
			return errors.New("malformed results")
		}
	}
	start := -1.0
	var end float64
	for k := range nb {
		sum := Interval{Stream: StreamSum}
		for i, st := range m.Streams {
			iv := Interval{Stream: i, Bytes: st.Bytes[k]}
			if udp {
				iv.Packets, iv.Lost, iv.OutOfOrder = st.Packets[k], st.Lost[k], st.OutOfOrder[k]
			}
			sum.Bytes += iv.Bytes
			sum.Packets += iv.Packets
			sum.Lost += iv.Lost
			sum.OutOfOrder += iv.OutOfOrder
			if cfg.Parallel > 1 {
				r.emit(receiverInterval(iv, cfg, m.Edges, k, nOmit))
			}
		}
		sum = receiverInterval(sum, cfg, m.Edges, k, nOmit)
		r.emit(sum)
		if sum.Omitted {
			continue
		}
		if start < 0 {
			start = sum.Start
		}
		end = sum.End
		res.ReceiverBytes += sum.Bytes
		res.Packets += sum.Packets + sum.Lost
		res.Lost += sum.Lost
		res.OutOfOrder += sum.OutOfOrder
	}
	if start >= 0 {
		res.ReceiverBitsPerSecond = bitrate(res.ReceiverBytes, end-start)
	}
	if res.Packets > 0 {
		res.LossPercent = 100 * float64(res.Lost) / float64(res.Packets)
	}
	return nil
}

func receiverInterval(iv Interval, cfg Config, edges []float64, k, nOmit int) Interval {
	iv.Workload, iv.Protocol, iv.Side = WorkloadName, cfg.Protocol, SideReceiver
	iv.Start, iv.End = edges[k], edges[k+1]
	iv.BitsPerSecond = bitrate(iv.Bytes, iv.End-iv.Start)
	iv.Omitted = k < nOmit
	return iv
}

func bitrate(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) * 8 / seconds
}
