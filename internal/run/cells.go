package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// cellRun is what one cell runs, whatever the workload: its clients, all
// at once, each a process the lab's launcher starts on an endpoint (or a
// host) of the lab, and what its cost line says.
type cellRun struct {
	clients []clientRun
	// limit stops clients that run far past their planned time.
	limit time.Duration
	// servers are the server processes (by name) whose CPU over the cell
	// the cost line charges.
	servers []string
	// cost is the cell's cost line: its test, case and repetition (the
	// runner fills in the rest).
	cost record.Cost
	// log is the role whose log the clients' command lines and stderr go
	// to (logs/MODE-ROLE.log).
	log string
	// span makes the cell's time its clients' own, from the first line
	// they print (their start line) to the last (their end line), rather
	// than from their start as processes to their exit: ping-pong's
	// requests per second over cells are siege's requests over siege's
	// time, as when siege ran inside cnperf, not diluted by starting a
	// process for each cell's few hundred requests.
	span bool
}

// clientRun is one client process of a cell.
type clientRun struct {
	name string       // process (cgroup) name
	ep   lab.Endpoint // where it runs: an endpoint, or a host without one
	args []string     // cnperf's binary and its arguments
	// line stores one line the client printed; an error marks the cell
	// failed (the first one is its reason). It is called under the cell's
	// lock, never concurrently.
	line func([]byte) error
}

// runCell runs a cell's clients at once and stores every line they print
// (through their line functions) and the cell's cost: the clients'
// CPU and memory and the delta of the servers'. A client that fails
// marks the cell failed with its reason; the run goes on. An interrupted
// cell keeps what its clients printed and returns ctx's error.
func (e *env) runCell(ctx context.Context, cr cellRun, cell *record.Cell, app *appender) error {
	serverBefore := map[string]lab.Usage{}
	for _, name := range cr.servers {
		if p, ok := e.procs[name]; ok {
			serverBefore[name], _ = p.Usage()
		}
	}
	logf, err := os.OpenFile(filepath.Join(e.logs, e.logName(cr.log)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()

	var mu sync.Mutex // the appender, the cell and the log, from every client's output
	var badLine error
	var first, last time.Time // when the first and the last line arrived
	type running struct {
		run    clientRun
		p      proc
		out    *lineWriter
		stderr *bytes.Buffer
	}
	var started []running
	flapStart := time.Now()
	stopAll := func() {
		for _, r := range started {
			_ = r.p.Stop(0)
		}
	}
	for _, r := range cr.clients {
		out := &lineWriter{fn: func(line []byte) {
			mu.Lock()
			defer mu.Unlock()
			last = time.Now().UTC()
			if first.IsZero() {
				first = last
			}
			if err := r.line(line); err != nil && badLine == nil {
				badLine = err
			}
		}}
		stderr := &bytes.Buffer{}
		mu.Lock()
		fmt.Fprintf(logf, "# cell %d %s: %s\n", cell.Index, r.name, strings.Join(r.args[1:], " "))
		mu.Unlock()
		p, err := e.startClient(r.name, r.ep, r.args, out, io.MultiWriter(&lockedWriter{mu: &mu, w: logf}, stderr))
		if err != nil {
			stopAll()
			return err
		}
		started = append(started, running{r, p, out, stderr})
	}
	// The lab's links flap at their offsets from the clients' start.
	stopFlaps := e.lab.Runtime.Flap(flapStart)
	timeout := time.After(cr.limit)
	var stopReason string
	for _, r := range started {
		if stopReason != "" {
			break
		}
		select {
		case <-r.p.Done():
		case <-ctx.Done():
			stopReason = "interrupted"
		case <-timeout:
			stopReason = fmt.Sprintf("client still running %s after it started: stopped", cr.limit)
		}
	}
	if stopReason != "" {
		for _, r := range started {
			_ = r.p.Stop(5 * time.Second) // SIGTERM first: the client prints what it has
		}
	}
	flaps := stopFlaps()
	var clientUse lab.Usage
	var failed []string
	for _, r := range started {
		_, exitErr := r.p.Exited()
		cu, _ := r.p.Usage()
		_ = r.p.Stop(0)
		r.out.flush()
		addUsage(&clientUse, cu)
		if exitErr != nil {
			failed = append(failed, fmt.Sprintf("%s: %v: %s", r.run.name, exitErr, lastLine(r.stderr.String())))
		}
	}
	var serverUse lab.Usage
	for _, name := range cr.servers {
		before, ok := serverBefore[name]
		if !ok {
			continue
		}
		su, _ := e.procs[name].Usage()
		su.CPUSeconds -= before.CPUSeconds
		su.UserSeconds -= before.UserSeconds
		su.SystemSeconds -= before.SystemSeconds
		addUsage(&serverUse, su)
	}
	mu.Lock()
	defer mu.Unlock()
	cell.Flaps = flaps
	if len(flaps) > 0 {
		cell.FlapsFrom = flapStart.UTC()
	}
	if cr.span && !first.IsZero() {
		cell.Start, cell.End = first, last
	}
	seconds := time.Since(cell.Start).Seconds()
	if !cell.End.IsZero() {
		seconds = cell.End.Sub(cell.Start).Seconds()
	}
	c := cr.cost
	c.Workload, c.Mode, c.Cell = "cost", e.key, cell.Index
	c.Seconds, c.Client, c.Server = seconds, clientUse, serverUse
	app.store(c)

	switch {
	case stopReason == "interrupted":
		return ctx.Err()
	case stopReason != "":
		cell.Error = stopReason
	case len(failed) == 1:
		cell.Error = "client: " + failed[0]
	case len(failed) > 1:
		cell.Error = fmt.Sprintf("%d of %d clients failed; first %s", len(failed), len(started), failed[0])
	case badLine != nil:
		cell.Error = badLine.Error()
	}
	if cell.Error != "" {
		cell.Failed++
	}
	return nil
}

// runClient runs one client to its end (a readiness probe's), its lines
// to line; an error is its exit's, with the last line it wrote to stderr.
func (e *env) runClient(ctx context.Context, r clientRun) error {
	out := &lineWriter{fn: func(line []byte) { _ = r.line(line) }}
	var stderr bytes.Buffer
	p, err := e.startClient(r.name, r.ep, r.args, out, &stderr)
	if err != nil {
		return err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		_ = p.Stop(5 * time.Second)
	}
	_, exitErr := p.Exited()
	_ = p.Stop(0)
	out.flush()
	if exitErr != nil && ctx.Err() == nil {
		return fmt.Errorf("%s on %s: %v: %s", r.name, r.ep.Host, exitErr, lastLine(stderr.String()))
	}
	return ctx.Err()
}

// addUsage adds u to sum: CPU over the cell adds up over processes, and so
// does their peak memory (they ran at once; an upper bound of the peak of
// the sum).
func addUsage(sum *lab.Usage, u lab.Usage) {
	if sum.Source == "" {
		sum.Source = u.Source
	}
	sum.CPUSeconds += u.CPUSeconds
	sum.UserSeconds += u.UserSeconds
	sum.SystemSeconds += u.SystemSeconds
	sum.MemoryPeak += u.MemoryPeak
	sum.MemoryCurrent += u.MemoryCurrent
}

// lockedWriter serialises writes of several clients into one log.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// lineWriter calls fn with every complete line written to it.
type lineWriter struct {
	buf []byte
	fn  func([]byte)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line := bytes.TrimSpace(w.buf[:i]); len(line) > 0 {
			w.fn(line)
		}
		w.buf = w.buf[i+1:]
	}
}

// flush passes on a last line without a newline.
func (w *lineWriter) flush() {
	if line := bytes.TrimSpace(w.buf); len(line) > 0 {
		w.fn(line)
	}
	w.buf = nil
}
