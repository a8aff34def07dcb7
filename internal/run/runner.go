// Package run carries out a spec: it builds one lab per series side by
// side, starts the workload's servers in each, and runs the plan's cells interleaved
// (round-robin over the modes, in chunks of sizes) so that drift on a shared
// machine hits every mode alike. Every sample is appended to the run as it
// arrives; the labs are removed on success, error and interruption.
package run

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/lab/sysinfo"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/run/profile"
	"github.com/cnperf/cnperf/internal/run/progress"
	"github.com/cnperf/cnperf/internal/spec"
)

// Options configure a run.
type Options struct {
	Spec    spec.Spec
	Dir     string    // run directory to create
	Exe     string    // the cnperf binary the servers run as
	Version string    // cnperf's version, stored in run.json
	Out     io.Writer // progress and messages (stderr)
	// Lab is the drivers and modes the binary links
	// (internal/lab/drivers.Catalog): the runner names none itself.
	Lab lab.Catalog
	// Flags are the command line's driver options by flag name, those
	// given (e.g. docker-host): each driver decodes its own.
	Flags map[string]string
	// Calibrate applies a spec's calibrate: from the reference run it
	// names (analysis.Calibrated: reading stored runs is the analysis'
	// job, not the runner's); nil refuses such a spec.
	Calibrate func(spec.Spec) (spec.Spec, error)
}

// Result is what a run produced; the samples are in Dir.
type Result struct {
	Dir     string
	Meta    *record.Meta
	Samples int
}

// env is one mode's running lab.
type env struct {
	key      string // the mode's key in the run: MODE, or MODE@DRIVER
	instance int    // which of the spec's instances of the mode's lab
	mode     lab.Mode
	driver   string
	lab      *lab.Lab
	procs    map[string]proc
	shift    int    // added to the workload's ports (labs sharing one stack)
	exe      string // the cnperf binary its servers and clients run
	logs     string // the run's logs directory
	// daemons reads the cluster's node daemons the lab's pods are on (the
	// CNI's agent, kube-proxy): nil off a cluster, or where they cannot
	// be read.
	daemons lab.DaemonMeter
	// prepared: the lab's runtime has put its shared state (Prepare).
	prepared bool
}

// proc is a server or client process of any driver, as the lab's
// launcher (lab.Runtime) started it.
type proc = lab.Proc

// appender stores samples and keeps the first error.
type appender struct {
	run   *record.Run
	bar   *progress.Bar
	err   error
	total int
	bytes map[string]int64 // payload bytes moved per mode
}

func (a *appender) add(v any, failed bool) {
	a.store(v)
	a.total++
	a.bar.Sample(failed)
}

// store appends a line that is no sample (a cell's cost).
func (a *appender) store(v any) {
	if err := a.run.Append(v); err != nil && a.err == nil {
		a.err = err
	}
}

// Plan is a run validated once, before anything is built: the spec as
// calibrated, its experiment (its tests' parts: ping-pong, socket cells) and each driver's
// decoded options. The CLI makes one, asks its Preflight and runs it.
type Plan struct {
	o    Options
	spec spec.Spec
	w    *experiment
	opts map[string]any
}

// NewPlan refuses a spec this cnperf cannot run, before anything is built:
// its fields (spec.Validate), its calibration (o.Calibrate reads the run
// calibrate.from names), its modes and drivers, the drivers' options
// (their spec sections and o.Flags, their warnings to o.Out), and what its
// labs' conditions say of their hosts (a zone naming a host the lab has
// not). Its errors are bad input.
func NewPlan(o Options) (*Plan, error) {
	// The fields first: calibration reads the run calibrate.from names.
	if err := o.Spec.Validate(); err != nil {
		return nil, err
	}
	s := o.Spec
	if s.Calibrate != nil && s.Calibrate.Derived == nil {
		if o.Calibrate == nil {
			return nil, errors.New("calibrate: this program reads no reference runs")
		}
		var err error
		if s, err = o.Calibrate(s); err != nil {
			return nil, err
		}
	}
	w, opts, err := check(o.Lab, s, o.Flags, o.Out)
	if err != nil {
		return nil, err
	}
	return &Plan{o: o, spec: s, w: w, opts: opts}, nil
}

// Preflight runs the preflight of each driver the plan uses (privileges,
// tools, a cluster that answers) and, when a lab is profiled, the
// profiler's, before anything is built. An error wrapped in lab.Failure is
// the machine's.
func (p *Plan) Preflight() error {
	if err := p.o.Lab.Preflight(p.spec, p.opts, p.o.Exe); err != nil {
		return err
	}
	for _, l := range p.spec.Labs() {
		if on, _ := l.Conditions.Profiles(); on {
			if machine, err := profile.Check(); machine {
				return lab.Failure{Err: err}
			} else if err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// check refuses what NewPlan refuses of a (calibrated) spec, in this
// order, and returns the experiment and each driver's options; warn takes
// the drivers' warnings (nil: none).
func check(cat lab.Catalog, s spec.Spec, flags map[string]string, warn io.Writer) (*experiment, map[string]any, error) {
	for _, c := range []func() error{
		s.Validate,
		func() error { return cat.CheckModes(s.Modes) },
		func() error { return cat.CheckDrivers(s.Driver, s.Drivers) },
		func() error { return cat.CheckSpec(s) },
		func() error { return checkChainModes(cat, s) },
		func() error { return checkModesOnDrivers(cat, s) },
		func() error { return checkServers(cat, s) },
	} {
		if err := c(); err != nil {
			return nil, nil, err
		}
	}
	var parts []part
	if s.RunsPingPong() {
		parts = append(parts, newPingPong(s))
	}
	if s.Socket() {
		cases, err := s.Cases()
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, newSocketCells(s, cases))
	}
	w := newExperiment(parts...)
	// Each driver decodes its own options and refuses bad ones (an engine
	// that does not answer) before anything is built.
	opts, err := cat.Options(s, flags, w.labConfig().Topology, warn)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLinks(cat, s, w.labConfig(), opts); err != nil {
		return nil, nil, err
	}
	var hosts []string
	for _, h := range w.labConfig().Topology.Hosts {
		hosts = append(hosts, h.Name)
	}
	for i, pl := range s.Labs() {
		if _, err := pl.Conditions.RemoteZone(hosts); err != nil {
			where := "conditions"
			if len(s.Variants) > 1 {
				where = fmt.Sprintf("variants[%d]", i%len(s.Variants))
			}
			return nil, nil, fmt.Errorf("%s.%w", where, err)
		}
	}
	return w, opts, nil
}

// Run plans o and carries it out (NewPlan, then Plan.Run).
func Run(ctx context.Context, o Options) (*Result, error) {
	p, err := NewPlan(o)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx)
}

// Run carries out the plan. When ctx is cancelled it stops measuring,
// keeps every sample so far, tears down and returns ctx's error with the
// result.
func (p *Plan) Run(ctx context.Context) (*Result, error) {
	p.sayCalibration()
	run, err := record.Create(p.o.Dir)
	if err != nil {
		return nil, err
	}
	defer run.Close()
	// A calibrated spec is stored with what it derived (spec.Calibrate).
	meta := &record.Meta{Format: 1, Cnperf: p.o.Version, ID: record.NewID("r"), Status: "running", Started: time.Now().UTC(), Spec: p.spec, Machine: sysinfo.DescribeMachine()}
	p.w.describeRun(meta)
	if err := run.WriteMeta(meta); err != nil {
		return nil, err
	}
	r := &running{Plan: p, ctx: ctx, run: run, meta: meta, res: &Result{Dir: p.o.Dir, Meta: meta}, envs: map[string]*env{}}
	committedBefore, _ := cost.Committed()
	if err := r.buildLabs(); err != nil {
		return r.finish(err)
	}
	r.measureIdle()
	if err := run.WriteMeta(meta); err != nil {
		return r.finish(err)
	}
	r.app = &appender{run: run, bytes: map[string]int64{}}
	peak := r.sampleMachine(committedBefore)
	runErr := r.measureCells()
	r.stopSampler()
	if now, err := cost.Committed(); err == nil {
		*peak = max(*peak, now)
	}
	if committedBefore > 0 {
		meta.Memory = &record.MemoryMeta{CommittedBefore: committedBefore, CommittedPeak: *peak, CommittedDelta: *peak - committedBefore}
	}
	for i := range meta.Modes {
		meta.Modes[i].Bytes = r.app.bytes[envKey(meta.Modes[i].Mode, meta.Modes[i].Instance)]
	}
	if runErr == nil {
		runErr = nothingMeasured(meta.Cells)
	}
	return r.finish(runErr)
}

// sayCalibration tells what a calibrated spec derived from its reference.
func (p *Plan) sayCalibration() {
	c := p.spec.Calibrate
	if c == nil || c.Derived == nil {
		return
	}
	fmt.Fprintf(p.o.Out, "cnperf: calibrated to %s (%s): round trip %s, %d bit/s: bandwidth %s, zone_delay %s\n",
		c.From, c.Derived.Series, c.Derived.RTT, c.Derived.BitsPerSecond, c.Derived.Bandwidth, c.Derived.ZoneDelay)
	if n := c.Derived.Skipped; n > 0 {
		fmt.Fprintf(p.o.Out, "cnperf: calibrate.from %s: %d lines of its samples.jsonl skipped (damaged, or of series its run.json does not list): cnperf calibrate %s names them\n", c.From, n, c.From)
	}
}

// running is a plan being carried out: its record, its labs by instance
// key, and what the cells stored.
type running struct {
	*Plan
	ctx  context.Context
	run  *record.Run
	meta *record.Meta
	res  *Result
	envs map[string]*env
	app  *appender
	// curMode is the mode whose cell runs, for the CPU sampler's tags.
	curMode     atomic.Value
	stopSampler func()
}

// finish tears the labs down and stores how the run ended.
func (r *running) finish(runErr error) (*Result, error) {
	// Whatever fails once the run is interrupted (a cell cut short, a
	// server the same signal reached) is the interruption's doing: the
	// run is recorded as interrupted, not failed.
	if runErr != nil && r.ctx.Err() != nil && !errors.Is(runErr, context.Canceled) {
		runErr = fmt.Errorf("%w (then: %v)", r.ctx.Err(), runErr)
	}
	teardown(r.o.Lab, r.envs, r.meta, r.o.Out)
	now := time.Now().UTC()
	r.meta.Finished = &now
	switch {
	case runErr == nil:
		r.meta.Status = "complete"
	case errors.Is(runErr, context.Canceled):
		r.meta.Status = "interrupted"
	default:
		r.meta.Status, r.meta.Error = "failed", runErr.Error()
	}
	return r.res, writeEnd(r.run, r.meta, runErr, r.o.Out)
}

// buildLabs builds every lab of the plan, instance by instance (so that a
// mode's instances are built apart), and records each with its namespaces.
func (r *running) buildLabs() error {
	logs := filepath.Join(r.o.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	keys := r.spec.ModeKeys()
	labs, instances := r.spec.Labs(), r.spec.LabInstances()
	if instances > 1 {
		fmt.Fprintf(r.o.Out, "cnperf: building %d labs (%s), %d instances of each\n", len(keys)*instances, strings.Join(keys, ", "), instances)
	} else {
		fmt.Fprintf(r.o.Out, "cnperf: building %d labs (%s)\n", len(keys), strings.Join(keys, ", "))
	}
	for n := range len(labs) * instances {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		inst, pl := n/len(labs), labs[n%len(labs)]
		m, err := r.o.Lab.Mode(pl.Mode)
		if err != nil {
			return err
		}
		d, err := r.o.Lab.Driver(pl.Driver)
		if err != nil {
			return err
		}
		e, err := startMode(r.ctx, r.meta.ID, pl, inst, d, driverTag(r.o.Lab, d), r.opts[d.Name()], 100*n, m, r.w, r.o.Exe, logs)
		if e != nil {
			r.envs[envKey(pl.Key, inst)] = e
		}
		if err != nil {
			return fmt.Errorf("mode %s: %w", instanceName(pl.Key, inst), err)
		}
		e.daemons = daemonMeter(e, instanceName(pl.Key, inst), r.o.Out)
		mm := record.ModeMeta{Mode: pl.Key, Setup: pl.Mode, Instance: inst, Driver: pl.Driver, Summary: m.Summary(), Lab: &e.lab.Lab, Conditions: pl.Conditions}
		if err := r.describeNamespaces(e, &mm); err != nil {
			return err
		}
		r.meta.Modes = append(r.meta.Modes, mm)
	}
	return nil
}

// describeNamespaces records every namespace of e's lab on this machine
// (its containers' too), and the run's receive window from the first
// host's.
func (r *running) describeNamespaces(e *env, mm *record.ModeMeta) error {
	first := e.lab.Hosts[0].NS
	listed, _ := namespace.List(lab.Prefix + e.lab.Name + "-")
	nss := e.lab.Namespaces(listed)
	for _, ns := range nss {
		d, err := sysinfo.DescribeNetns(ns, true)
		if err != nil {
			return err
		}
		mm.Namespaces = append(mm.Namespaces, d)
		if ns == first && r.meta.ReceiveWindow == 0 {
			r.meta.ReceiveWindow = sysinfo.ReceiveWindow(d.Sysctls)
		}
	}
	return nil
}

// measureIdle records what each lab's daemons (overlay routers, Open
// vSwitch, flanneld, etcd, a cluster's node daemons) spend at rest, before
// any cell loads them: a mode's cost that no cell's figure shows.
func (r *running) measureIdle() {
	idle := measureIdle(r.ctx, idleSources(r.envs), idleWindow, time.Now)
	for i := range r.meta.Modes {
		r.meta.Modes[i].Idle = idle[envKey(r.meta.Modes[i].Mode, r.meta.Modes[i].Instance)]
	}
}

// sampleMachine stores the machine's CPU per core each second, tagged with
// the mode whose cell runs, until stopSampler; the returned peak of
// committed memory is final once it has stopped.
func (r *running) sampleMachine(committedBefore int64) *int64 {
	r.curMode.Store("")
	peak := committedBefore
	sctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cost.Sample(sctx, time.Second, func(c cost.CPUSample) {
			c.Mode = r.curMode.Load().(string)
			peak = max(peak, c.Committed)
			_ = r.run.Append(c)
		})
	}()
	r.stopSampler = func() { cancel(); <-done }
	return &peak
}

// measureCells runs the plan's cells, interleaved over the modes and their
// instances, storing each cell as it ends. It stops at the first error
// that is the run's (not a cell's), and returns it.
func (r *running) measureCells() error {
	keys, instances := r.spec.ModeKeys(), r.spec.LabInstances()
	cells := staged(interleave(keys, r.w.units(), instances), r.spec.Labs())
	r.app.bar = progress.New(r.o.Out, len(cells), r.w.expectedSamples(len(keys)))
	defer r.app.bar.Done()
	meter, own := loadMeter(r.envs)
	for i, c := range cells {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if err := r.measureCell(i, c, meter, own); err != nil {
			return err
		}
	}
	return nil
}

// measureCell runs one cell and stores it: the load's and the node
// daemons' snapshots bracket it from outside its start and end, so that
// reading them adds nothing to the cell's time (its requests per second).
// A process the mode runs (an overlay router) that has died fails this
// mode's cells with the reason; the other modes go on.
func (r *running) measureCell(i int, c cellPlan, meter *cost.Meter, own bool) error {
	e, key := r.envs[envKey(c.mode, c.instance)], envKey(c.mode, c.instance)
	if !e.prepared {
		e.prepared = true
		if err := e.lab.Runtime.Prepare(e.lab); err != nil {
			return fmt.Errorf("mode %s: %w", c.mode, err)
		}
	}
	// Sampling starts before the load's snapshot, so that perf's own start
	// is in no cell's load.
	prof, err := r.startProfile(i, e)
	if err != nil {
		return err
	}
	var started func(int)
	if prof != nil {
		defer prof.s.Discard()
		started = prof.ctx.Client
	}
	var snap cost.Snapshot
	snapErr := errors.New("no meter")
	if meter != nil {
		snap, snapErr = meter.Read()
	}
	var dBefore lab.DaemonSnapshot
	dErr := errors.New("no daemon meter")
	if e.daemons != nil {
		dBefore, dErr = e.daemons.Read()
	}
	cell := record.Cell{Index: i, Mode: c.mode, Instance: c.instance, Chunk: c.unit, Start: time.Now().UTC()}
	r.w.describeCell(c.unit, &cell)
	if err := e.lab.Alive(); err != nil {
		cell.Error, cell.Failed, cell.End = err.Error(), 1, time.Now().UTC()
		return r.storeCell(cell)
	}
	r.curMode.Store(c.mode)
	before, bytesBefore := r.app.total, r.app.bytes[key]
	cr, err := r.w.cell(e, c.unit, &cell, r.app)
	if err == nil {
		watched := watchConntrack(e, cr.conntrack)
		err = e.runCell(r.ctx, cr, &cell, r.app, started)
		cell.Conntrack = watched()
	}
	if lerr := e.lab.Alive(); lerr != nil && cell.Error == "" {
		cell.Error = lerr.Error() // it died during this cell
	}
	r.res.Samples += r.app.total - before
	if cell.End.IsZero() { // else the cell's clients timed it (cellRun.span)
		cell.End = time.Now().UTC()
	}
	var profErr error
	if prof != nil {
		profErr = prof.s.Disable()
	}
	if snapErr == nil {
		if end, err := meter.Read(); err == nil {
			cell.Load = cost.Load(snap, end, own)
			cell.Kernel = cost.Kernel(snap.Kernel, end.Kernel, r.app.bytes[key]-bytesBefore, pinnedCores(e))
		}
	}
	if dErr == nil {
		if dAfter, err := e.daemons.Read(); err == nil {
			cell.Daemons = lab.DaemonCosts(dBefore, dAfter, cell.Start, cell.End)
		}
	}
	if prof != nil && profErr == nil { // read after the cell, in no cell's time
		cell.Profile, profErr = prof.s.Finish(r.o.Dir, record.StacksFile(i), prof.ctx)
	}
	if serr := r.storeCell(cell); serr != nil {
		return serr
	}
	if profErr != nil {
		return profErr
	}
	if err != nil {
		return err
	}
	if err := e.alive(); err != nil {
		return fmt.Errorf("mode %s: %w", c.mode, err)
	}
	return nil
}

// storeCell adds a cell to the record and writes it.
func (r *running) storeCell(cell record.Cell) error {
	r.meta.Cells = append(r.meta.Cells, cell)
	r.app.bar.Cell()
	if r.app.err != nil {
		return fmt.Errorf("store samples: %w", r.app.err)
	}
	return r.run.WriteMeta(r.meta)
}

// nothingMeasured is the error of a run all of whose cells ran and none
// measured anything: no cell ended without an error and with a sample
// that did not fail (a request answered, a socket test's line). Such a
// run failed (status failed, exit 1), though no step of it did; one cell
// that measured keeps it complete, its failed cells counted in its
// record. Nil for no cells: a run stopped before any.
func nothingMeasured(cells []record.Cell) error {
	if len(cells) == 0 {
		return nil
	}
	first := ""
	for _, c := range cells {
		if c.Error == "" && c.Samples > c.Failed {
			return nil
		}
		if first == "" {
			first = c.Error
		}
	}
	switch {
	case first == "" && len(cells) == 1:
		return errors.New("nothing was measured: every request of the one cell failed")
	case first == "":
		return fmt.Errorf("nothing was measured: every request of the %d cells failed", len(cells))
	case len(cells) == 1:
		return fmt.Errorf("nothing was measured: the one cell failed: %s", first)
	}
	return fmt.Errorf("nothing was measured: all %d cells failed (the first: %s)", len(cells), first)
}

// loadMeter is what measures each cell's load (cost.Load): nil when some
// lab runs on other machines, where this machine's load says nothing of
// theirs. own is false when some of the run's processes are out of the
// meter's sight (pods on a cluster, containers of an existing engine), so
// that outside work cannot be told from the run's.
func loadMeter(envs map[string]*env) (m *cost.Meter, own bool) {
	own = true
	var labs []string
	for _, e := range envs {
		sight := lab.Sight{Local: true, Own: true}
		if e.lab.Runtime != nil {
			sight = e.lab.Runtime.Sight()
		}
		if !sight.Local {
			return nil, false
		}
		labs = append(labs, e.lab.Name)
		own = own && sight.Own
	}
	slices.Sort(labs)
	return cost.NewMeter(labs), own
}

// pinnedCores are the cores a cores condition pinned the lab's hosts and
// their overlay routers to (nil: not pinned), over which a cell's kernel
// time is summed too.
func pinnedCores(e *env) []int {
	if e.lab == nil {
		return nil
	}
	c := e.lab.Conditions
	cores := slices.Concat(c.HostCPUs(), c.RouterCPUs())
	slices.Sort(cores)
	return slices.Compact(cores)
}

// daemonMeter is the reader of the node daemons a lab's pods run on, when
// its runtime has one (Runtime.DaemonMeter); when it has none for a reason of
// the cluster's (no metrics API), that is said once and cells record no
// daemons.
func daemonMeter(e *env, name string, out io.Writer) lab.DaemonMeter {
	if e.lab.Runtime == nil {
		return nil
	}
	m, err := e.lab.Runtime.DaemonMeter()
	if err != nil {
		fmt.Fprintf(out, "cnperf: mode %s: the nodes' daemons' CPU and memory: not available (%v)\n", name, err)
		return nil
	}
	return m
}

// cellPlan is one cell before it runs: a unit of work (a chunk of sizes,
// or a repetition of a test case) on one mode.
type cellPlan struct {
	mode     string
	unit     int
	instance int
}

// envKey names a running lab: its mode's key, and #I for instances past
// the first.
func envKey(key string, instance int) string {
	if instance == 0 {
		return key
	}
	return fmt.Sprintf("%s#%d", key, instance)
}

// instanceName is envKey for people: MODE, or MODE (instance I).
func instanceName(key string, instance int) string {
	if instance == 0 {
		return key
	}
	return fmt.Sprintf("%s (instance %d)", key, instance)
}

// interleave runs every unit on every mode before the next unit, with the
// modes' order rotated by the unit so that no mode always goes first after
// a pause: drift on a shared machine hits every mode alike.
// With several instances of each lab, unit k runs on instance k mod
// instances in every mode, so that each instance carries the same units
// (the same message sizes) in every mode and instances compare like with
// like.
func interleave(modes []string, units, instances int) []cellPlan {
	var cells []cellPlan
	n := len(modes)
	for k := 0; k < units; k++ {
		for j := 0; j < n; j++ {
			cells = append(cells, cellPlan{mode: modes[(k+j)%n], unit: k, instance: k % max(1, instances)})
		}
	}
	return cells
}

// startMode builds a mode's lab on a driver and starts the workload's
// servers in it.
// On an existing engine every lab shares this machine's stack, and on
// engines of other machines each machine's, so each lab's ports are
// shifted by shift to keep them apart.
func startMode(ctx context.Context, id string, pl spec.Lab, instance int, d lab.Driver, tag string, options any, shift int, m lab.Mode, w *experiment, exe, logs string) (*env, error) {
	key, driver := pl.Key, d.Name()
	cfg := w.labConfig()
	cfg.Name, cfg.Mode, cfg.Driver, cfg.Exe, cfg.Logs = labName(id, tag, m.Name(), pl.Conditions.Label(), instance), m, driver, exe, logs
	cfg.Options = options
	cfg.Conditions = pl.Conditions
	cfg.Links = pl.Links
	// The lab is this process's: `cnperf clean` elsewhere spares it while
	// the run goes on and removes it if the run is killed.
	self, err := owner.Self()
	if err != nil {
		return nil, fmt.Errorf("who owns lab %s: %w", cfg.Name, err)
	}
	cfg.Owner = self
	// Labs that share a stack (an existing engine, a cluster's nodes,
	// whose stacks the hostNetwork pods of every lab of the run use at
	// once) have their ports kept apart.
	if d.Capabilities(options).SharesStack {
		cfg.Port += shift
		cfg.Publish = slices.Clone(cfg.Publish)
		for i := range cfg.Publish {
			cfg.Publish[i].Number += shift
		}
	} else {
		shift = 0
	}
	l, err := lab.Up(d, cfg)
	if err != nil {
		return nil, err
	}
	e := &env{key: key, instance: instance, mode: m, driver: driver, lab: l, procs: map[string]proc{}, shift: shift, exe: exe, logs: logs}
	servers, err := w.servers(e)
	if err != nil {
		return e, err
	}
	return e, e.startServers(ctx, servers, func(ctx context.Context) error { return w.ready(ctx, e) })
}

// labName names a run's lab of a mode on a driver. Lab names take no '-'
// (it separates lab and host in namespace names).
// Labs of the same mode under several variants get the variant's hash.
// Labs of drivers other than the default carry tag (driverTag).
func labName(id, tag, mode, variant string, instance int) string {
	mode = strings.ReplaceAll(mode, "-", "_")
	name := id + "_" + mode
	if tag != "" {
		name = id + "_" + tag + "_" + mode
	}
	if variant != "" {
		name += fmt.Sprintf("_%04x", crc32.ChecksumIEEE([]byte(variant))&0xffff)
	}
	if instance > 0 {
		name += fmt.Sprintf("_i%d", instance)
	}
	return name
}

// driverTag is what the names of d's labs carry: nothing for the default
// driver (cat's first), else its Capabilities' tag or its name.
func driverTag(cat lab.Catalog, d lab.Driver) string {
	if len(cat.Drivers) > 0 && cat.Drivers[0].Name() == d.Name() {
		return ""
	}
	if t := d.Capabilities(nil).Tag; t != "" {
		return t
	}
	return d.Name()
}

// logName is the log file of a role in this mode's lab: the key, with the
// '/' of a variant made a file name's.
func (e *env) logName(role string) string {
	return strings.ReplaceAll(envKey(e.key, e.instance), "/", "_") + "-" + role + ".log"
}

// startClient starts a client process on an endpoint, through the lab's
// launcher.
func (e *env) startClient(name string, ep lab.Endpoint, args []string, stdout, stderr io.Writer) (proc, error) {
	if e.lab.Runtime == nil {
		return nil, fmt.Errorf("lab %s: its driver started no launcher", e.lab.Name)
	}
	return e.lab.Runtime.StartClient(ep, name, args, stdout, stderr)
}

// alive reports a server, or a daemon of the lab's runtime (a Docker
// daemon, a pod), that has died.
func (e *env) alive() error {
	rt := e.lab.Runtime
	if rt != nil {
		if err := rt.Alive(); err != nil {
			return err
		}
	}
	for role, p := range e.procs {
		if done, err := p.Exited(); done {
			// A daemon's death is the cause to report: a server in its
			// container sees its engine's connection break at once, the
			// daemon's reaper a moment later.
			if rt != nil {
				var rerr error
				_ = poll.Until(context.Background(), runtimeGrace, 20*time.Millisecond, func() (bool, error) {
					rerr = rt.Alive()
					return rerr != nil, nil
				})
				if rerr != nil {
					return rerr
				}
			}
			return fmt.Errorf("%s server exited (%v); see logs/%s", role, err, e.logName(role))
		}
	}
	return nil
}

// runtimeGrace is how long alive waits, once a server has exited, for
// its lab's runtime (a Docker daemon) to be found dead too.
const runtimeGrace = time.Second

// writeEnd writes the run's end (meta's final status) into run.json and
// returns runErr, or the write's error when the run had none. When run.json
// cannot be written (a full disk) it stays at status running: out is told
// so, and meta is put back to what run.json says.
func writeEnd(run *record.Run, meta *record.Meta, runErr error, out io.Writer) error {
	err := run.WriteMeta(meta)
	if err == nil {
		return runErr
	}
	fmt.Fprintf(out, "cnperf: the run ended %s, but %v: %s keeps status running\n", meta.Status, err, filepath.Join(run.Dir(), record.MetaFile))
	meta.Status, meta.Error, meta.Finished = "running", "", nil
	if runErr == nil {
		return err
	}
	return runErr
}

// teardown records the servers' usage, stops them and removes every lab.
func teardown(cat lab.Catalog, envs map[string]*env, meta *record.Meta, out io.Writer) {
	for i := range meta.Modes {
		mm := &meta.Modes[i]
		e := envs[envKey(mm.Mode, mm.Instance)]
		if e == nil {
			continue
		}
		procs := maps.Clone(e.procs)
		if e.lab != nil {
			// The delay line's counters (what it moved, lost, dropped
			// when full) go into the lab's record before it is removed.
			if e.lab.Runtime != nil {
				if err := e.lab.Runtime.Record(e.lab); err != nil {
					fmt.Fprintf(out, "cnperf: lab %s: the delay line's counters: %v\n", e.lab.Name, err)
				}
			}
			for name, p := range e.lab.Processes() { // overlay routers
				procs[name] = p
			}
		}
		for role, p := range procs {
			if u, err := p.Usage(); err == nil {
				if mm.Usage == nil {
					mm.Usage = map[string]lab.Usage{}
				}
				mm.Usage[role] = u
			}
		}
	}
	for _, e := range envs {
		for _, p := range e.procs {
			_ = p.Stop(3 * time.Second)
		}
		if e.lab != nil {
			if err := cat.Down(e.lab.Name); err != nil {
				fmt.Fprintf(out, "cnperf: removing lab %s: %v (run `cnperf clean`)\n", e.lab.Name, err)
			}
		}
	}
}
