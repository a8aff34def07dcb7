package udp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/udpseq"
)

// DialFunc dials the listener: "tcp" for the control connection, "udp" for
// the datagrams.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Client-side limits.
const (
	maxSendErrors = 1000 // consecutive failed writes before giving up
	// maxAnswer bounds a listener's answer line: a report holds at most
	// MaxRecords intervals, under 1 MB.
	maxAnswer = 16 << 20
)

// flow is what one test sends.
type flow struct {
	workload string
	addr     string
	size     int // 0: from the route's MTU
	rate     int64
	count    int64
	duration time.Duration
	interval time.Duration
	dial     DialFunc
}

// run performs one test and returns the listener's report and the datagram
// size used (nil report when there is none). When ctx ends early, it still asks for the report of what was
// sent and returns it with ctx's error.
func run(ctx context.Context, f flow) (*Report, int, error) {
	dial := f.dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	addr := serverkit.WithPort(f.addr, descriptors.UDPPort)
	ctl, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, 0, fmt.Errorf("control connection: %w", err)
	}
	defer ctl.Close()
	data, err := dial(ctx, "udp", addr)
	if err != nil {
		return nil, 0, fmt.Errorf("data socket: %w", err)
	}
	defer data.Close()
	size := f.size
	if size == 0 {
		size = DefaultPacketSize(workload.FitMTU(data.LocalAddr()))
	}
	sc := bufio.NewScanner(ctl)
	sc.Buffer(make([]byte, 64<<10), maxAnswer)
	exchange := func(req request, timeout time.Duration) (response, error) {
		_ = ctl.SetDeadline(time.Now().Add(timeout))
		b, _ := json.Marshal(req)
		if _, err := ctl.Write(append(b, '\n')); err != nil {
			return response{}, err
		}
		if !sc.Scan() {
			if sc.Err() != nil {
				return response{}, sc.Err()
			}
			return response{}, errors.New("listener closed the control connection")
		}
		var r response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return response{}, fmt.Errorf("bad answer from the listener: %w", err)
		}
		if r.Error != "" {
			return response{}, fmt.Errorf("listener: %s", r.Error)
		}
		return r, nil
	}
	// Abort the start exchange if ctx ends.
	stopWatch := context.AfterFunc(ctx, func() { _ = ctl.SetDeadline(time.Now()) })
	r, err := exchange(request{Op: "start", Workload: f.workload, Size: size, Interval: f.interval}, serverkit.ControlTimeout)
	if !stopWatch() && ctx.Err() != nil {
		return nil, size, ctx.Err()
	}
	if err != nil {
		return nil, size, fmt.Errorf("start: %w", err)
	}
	sent, serr := send(ctx, data, r.TestID, f, size)
	r, err = exchange(request{Op: "stop", Sent: sent}, DefaultGrace+serverkit.ControlTimeout)
	if err != nil {
		return nil, size, errors.Join(serr, fmt.Errorf("report: %w", err))
	}
	if r.Report == nil {
		return nil, size, errors.Join(serr, errors.New("report: the listener sent none"))
	}
	return r.Report, size, serr
}

// send paces datagrams until the count, the duration or ctx ends, and
// returns how many went out.
func send(ctx context.Context, c net.Conn, id uint32, f flow, size int) (int64, error) {
	buf := make([]byte, size)
	start := time.Now()
	var deadline time.Time
	if f.duration > 0 {
		deadline = start.Add(f.duration)
		// A write blocked on a full path cannot outlast the test.
		_ = c.SetWriteDeadline(deadline.Add(time.Second))
	}
	var pacer *udpseq.Pacer
	if f.rate > 0 {
		pacer = udpseq.NewPacer(start, f.rate, size, udpseq.BurstWindow, udpseq.MinSleep)
	}
	done := ctx.Done()
	var sent int64
	fails := 0
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-done:
			return sent, ctx.Err()
		default:
		}
		now := time.Now()
		if !deadline.IsZero() && !now.Before(deadline) {
			return sent, nil
		}
		n := 1
		if pacer != nil {
			var wait time.Duration
			n, wait = pacer.Next(now)
			if n == 0 {
				if !deadline.IsZero() {
					wait = min(wait, deadline.Sub(now))
				}
				timer.Reset(wait)
				select {
				case <-done:
					return sent, ctx.Err()
				case <-timer.C:
				}
				continue
			}
		}
		for range n {
			if f.count > 0 && sent >= f.count {
				return sent, nil
			}
			Header{TestID: id, Seq: uint64(sent), SendNS: time.Now().UnixNano()}.Put(buf)
			if _, err := c.Write(buf); err != nil {
				var ne net.Error
				switch {
				case errors.As(err, &ne) && ne.Timeout():
					return sent, nil
				case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOBUFS), errors.Is(err, syscall.EAGAIN):
					if fails++; fails > maxSendErrors {
						return sent, fmt.Errorf("send: %w", err)
					}
					continue // not sent: the next datagram reuses the sequence number
				default:
					return sent, fmt.Errorf("send: %w", err)
				}
			}
			fails = 0
			sent++
		}
	}
}
