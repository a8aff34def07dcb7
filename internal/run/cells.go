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
	// conntrack: the workload fills the datapath's connection state, so
	// the lab's conntrack tables are read during the cell.
	conntrack bool
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
// cell keeps what its clients printed and returns ctx's error. started,
// when not nil, is told each client's PID as it starts (the profile's).
func (e *env) runCell(ctx context.Context, cr cellRun, cell *record.Cell, app *appender, started func(int)) error {
	before := e.serverUsage(cr.servers)
	logf, err := os.OpenFile(filepath.Join(e.logs, e.logName(cr.log)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cc := &cellClients{log: logf}
	flapStart := time.Now()
	if err := cc.start(e, cr, cell.Index, started); err != nil {
		return err
	}
	// The lab's links flap at their offsets from the clients' start.
	stopFlaps := e.lab.Runtime.Flap(flapStart)
	stopReason := cc.wait(ctx, cr.limit)
	flaps := stopFlaps()
	clientUse, failed := cc.end()
	serverUse := e.serverUsageSince(cr.servers, before)

	cc.mu.Lock()
	defer cc.mu.Unlock()
	cell.Flaps = flaps
	if len(flaps) > 0 {
		cell.FlapsFrom = flapStart.UTC()
	}
	if cr.span && !cc.first.IsZero() {
		cell.Start, cell.End = cc.first, cc.last
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
		cell.Error = fmt.Sprintf("%d of %d clients failed; first %s", len(failed), len(cc.started), failed[0])
	case cc.badLine != nil:
		cell.Error = cc.badLine.Error()
	}
	if cell.Error != "" {
		cell.Failed++
	}
	return nil
}

// cellClients are a cell's client processes and what their output said:
// mu guards the fields below it, the log and the lines' stores, written
// from every client's output.
type cellClients struct {
	log     io.Writer
	started []startedClient

	mu          sync.Mutex
	badLine     error     // the first line a client's line function refused
	first, last time.Time // when the first and the last line arrived
}

type startedClient struct {
	run    clientRun
	p      proc
	out    *lineWriter
	stderr *bytes.Buffer
}

// start starts every client of cr; when one cannot start, those started
// are stopped.
func (cc *cellClients) start(e *env, cr cellRun, cell int, started func(int)) error {
	for _, r := range cr.clients {
		out := &lineWriter{fn: func(line []byte) {
			cc.mu.Lock()
			defer cc.mu.Unlock()
			cc.last = time.Now().UTC()
			if cc.first.IsZero() {
				cc.first = cc.last
			}
			if err := r.line(line); err != nil && cc.badLine == nil {
				cc.badLine = err
			}
		}}
		stderr := &bytes.Buffer{}
		cc.mu.Lock()
		fmt.Fprintf(cc.log, "# cell %d %s: %s\n", cell, r.name, strings.Join(r.args[1:], " "))
		cc.mu.Unlock()
		p, err := e.startClient(r.name, r.ep, r.args, out, io.MultiWriter(&lockedWriter{mu: &cc.mu, w: cc.log}, stderr))
		if err != nil {
			for _, s := range cc.started {
				_ = s.p.Stop(0)
			}
			return err
		}
		if started != nil {
			started(p.PID())
		}
		cc.started = append(cc.started, startedClient{r, p, out, stderr})
	}
	return nil
}

// wait waits for every client to exit, and says why it stopped them if it
// did: the run was interrupted, or they ran past limit.
func (cc *cellClients) wait(ctx context.Context, limit time.Duration) string {
	timeout := time.After(limit)
	var stopReason string
	for _, r := range cc.started {
		if stopReason != "" {
			break
		}
		select {
		case <-r.p.Done():
		case <-ctx.Done():
			stopReason = "interrupted"
		case <-timeout:
			stopReason = fmt.Sprintf("client still running %s after it started: stopped", limit)
		}
	}
	if stopReason != "" {
		for _, r := range cc.started {
			_ = r.p.Stop(5 * time.Second) // SIGTERM first: the client prints what it has
		}
	}
	return stopReason
}

// end reaps the clients, flushes their last lines and sums their CPU and
// memory; failed says each that exited with an error.
func (cc *cellClients) end() (use lab.Usage, failed []string) {
	for _, r := range cc.started {
		_, exitErr := r.p.Exited()
		cu, _ := r.p.Usage()
		_ = r.p.Stop(0)
		r.out.flush()
		addUsage(&use, cu)
		if exitErr != nil {
			failed = append(failed, fmt.Sprintf("%s: %v: %s", r.run.name, exitErr, lastLine(r.stderr.String())))
		}
	}
	return use, failed
}

// serverUsage reads the named servers' CPU and memory now.
func (e *env) serverUsage(servers []string) map[string]lab.Usage {
	use := map[string]lab.Usage{}
	for _, name := range servers {
		if p, ok := e.procs[name]; ok {
			use[name], _ = p.Usage()
		}
	}
	return use
}

// serverUsageSince sums the named servers' CPU since before and their
// memory now.
func (e *env) serverUsageSince(servers []string, before map[string]lab.Usage) lab.Usage {
	var sum lab.Usage
	for _, name := range servers {
		b, ok := before[name]
		if !ok {
			continue
		}
		su, _ := e.procs[name].Usage()
		su.CPUSeconds -= b.CPUSeconds
		su.UserSeconds -= b.UserSeconds
		su.SystemSeconds -= b.SystemSeconds
		addUsage(&sum, su)
	}
	return sum
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
