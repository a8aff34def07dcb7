package profile

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/record"
)

// Bounds of what Fold reads and keeps: perf script's output is a tool's,
// so no line, frame or stack of it is taken on trust.
const (
	maxLine   = 1 << 20 // a line of perf script's output
	maxFrame  = 512     // characters of a frame's name
	maxDepth  = 512     // frames of a sample (perf's own default is 127)
	maxBytes  = 8 << 20 // a cell's folded text: well inside record.MaxStacksBytes once gzip'd
	keepWhile = 4       // distinct stacks held while reading: keepWhile × the caps
)

// softirqFrames are the kernel functions that run softirqs: a sample of
// pid 0 under one of them is the kernel's work on packets, not idle.
var softirqFrames = []string{"__do_softirq", "handle_softirqs", "net_rx_action"}

// Summary is what folding a cell's samples found, record.CellProfile's
// counts.
type Summary struct {
	Samples        uint64
	DroppedSamples uint64
	DroppedStacks  int
	ByContext      map[string]uint64
}

// Fold reads perf script's output (-F comm,pid,tid,ip,sym,dso of a
// recording with call graphs: a "COMM PID/TID" line, then one
// "IP SYM (DSO)" line per frame, leaf first, then a blank line) and folds
// its samples into stacks, root first, each under its context (ctx.Of).
// The caps (record.MaxStacks distinct stacks, maxBytes of text) keep the
// stacks with the most samples; the rest are counted and folded into one
// "CONTEXT;[truncated]" stack per context, so the totals hold.
func Fold(r io.Reader, ctx *Contexts) (record.Stacks, Summary, error) {
	sum := Summary{ByContext: map[string]uint64{}}
	all := record.Stacks{}
	cut := map[string]uint64{} // context -> samples cut while reading
	var held int               // bytes of all's keys
	var s sample
	flush := func() {
		if !s.open {
			return
		}
		c := ctx.Of(s.pid, s.comm, s.softirq)
		stack := c + s.stack()
		sum.Samples++
		sum.ByContext[c]++
		switch _, seen := all[stack]; {
		case seen:
			all[stack]++
		case len(all) < keepWhile*record.MaxStacks && held+len(stack) < keepWhile*maxBytes:
			all[stack] = 1
			held += len(stack)
		default:
			cut[c]++
		}
		s = sample{}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		var err error
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] == ' ' || line[0] == '\t':
			err = s.frame(line)
		default:
			flush()
			err = s.header(line)
		}
		if err != nil {
			return nil, sum, fmt.Errorf("perf script line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, sum, fmt.Errorf("perf script: %w", err)
	}
	flush()
	stacks := capStacks(all, cut, &sum)
	return stacks, sum, nil
}

// capStacks keeps the stacks with the most samples within the caps and
// folds the rest, with cut, into truncated stacks per context.
func capStacks(all record.Stacks, cut map[string]uint64, sum *Summary) record.Stacks {
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(all[b], all[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	// Room for one truncated stack per context.
	roomStacks := record.MaxStacks - len(sum.ByContext)
	roomBytes := maxBytes
	for c := range sum.ByContext {
		roomBytes -= len(c) + len(record.TruncatedFrame) + 24
	}
	out := record.Stacks{}
	for _, k := range keys {
		line := len(k) + 22
		if len(out) < roomStacks && line <= roomBytes {
			out[k] = all[k]
			roomBytes -= line
			continue
		}
		c := record.Context(k)
		cut[c] += all[k]
		sum.DroppedStacks++
	}
	for c, n := range cut {
		if n > 0 {
			out[c+";"+record.TruncatedFrame] += n
			sum.DroppedSamples += n
		}
	}
	return out
}

// sample is one sample of perf script's output being read.
type sample struct {
	open    bool
	pid     int
	comm    string
	frames  []string // leaf first
	softirq bool
}

// header reads "COMM PID/TID", and "[CPU]" after it if perf was asked for
// the CPU too (COMM may hold blanks); perf writes -1/-1 for a sample it
// could tie to no thread, which is then other.
func (s *sample) header(line string) error {
	f := strings.Fields(line)
	if len(f) > 2 && strings.HasPrefix(f[len(f)-1], "[") {
		f = f[:len(f)-1]
	}
	if len(f) < 2 {
		return errors.New(`not "COMM PID/TID"`)
	}
	pid, _, ok := strings.Cut(f[len(f)-1], "/")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil {
		return fmt.Errorf("%q: not PID/TID", f[len(f)-1])
	}
	*s = sample{open: true, pid: n, comm: strings.Join(f[:len(f)-1], " ")}
	return nil
}

// frame reads "IP SYM (DSO)"; SYM may hold blanks and parentheses, and
// is "[unknown]" when perf could not name it.
func (s *sample) frame(line string) error {
	if !s.open {
		return errors.New("a frame before any sample")
	}
	line = strings.TrimSpace(line)
	ipText, rest, _ := strings.Cut(line, " ")
	ip, err := strconv.ParseUint(ipText, 16, 64)
	if err != nil {
		return fmt.Errorf("%q: not a frame's address", ipText)
	}
	sym, dso := strings.TrimSpace(rest), ""
	if i := strings.LastIndex(sym, " ("); i >= 0 && strings.HasSuffix(sym, ")") {
		sym, dso = sym[:i], sym[i+2:len(sym)-1]
	}
	if len(s.frames) == maxDepth {
		return nil // deeper frames are the root's end of an endless stack
	}
	if sym == "" {
		sym = "[unknown]"
	}
	if len(sym) > maxFrame {
		sym = sym[:maxFrame]
	}
	sym = strings.Map(func(r rune) rune {
		if r == ';' || r == ' ' || r == '\t' || r == '\r' || r < ' ' {
			return '_'
		}
		return r
	}, sym)
	// Kernel addresses are the top half of the address space; perf prints
	// user frames' addresses relative to their file.
	if ip >= 1<<63 || dso == "[kernel.kallsyms]" {
		s.softirq = s.softirq || slices.Contains(softirqFrames, sym)
		sym += record.KernelFrame
	}
	s.frames = append(s.frames, sym)
	return nil
}

// stack is the sample's frames root first, each after a ";", or
// ";[unknown]" for a sample without frames.
func (s *sample) stack() string {
	if len(s.frames) == 0 {
		return ";[unknown]"
	}
	var b strings.Builder
	for i := len(s.frames) - 1; i >= 0; i-- {
		b.WriteByte(';')
		b.WriteString(s.frames[i])
	}
	return b.String()
}

// Contexts says what each process a sample ran is (record.StackServer,
// ...): from the processes the runner started (Add) and, for the others,
// their names.
type Contexts struct {
	pids   map[int]string
	self   int
	comms  []string       // the names cnperf's processes run under
	guess  bool           // a server or client PID was not this machine's (a pod's)
	proc   string         // /proc: tests point it elsewhere
	looked map[int]string // contexts found by name, once per process
}

// NewContexts are the contexts of a cell run by this process, whose
// binary is exe.
func NewContexts(exe string) *Contexts {
	return &Contexts{pids: map[int]string{}, self: os.Getpid(), comms: []string{"cnperf", comm(filepath.Base(exe))}, proc: "/proc", looked: map[int]string{}}
}

// comm is a program's name as the kernel keeps it (TASK_COMM_LEN).
func comm(name string) string { return name[:min(len(name), 15)] }

// Add says that pid is context c. A server's or client's pid (or another
// lab's, other) is taken only when the process is one of cnperf's: a
// launcher that runs processes elsewhere (in a pod) knows them by PIDs
// that are not this machine's.
func (c *Contexts) Add(pid int, ctx string) {
	if launched := ctx == record.StackServer || ctx == record.StackClient; launched || ctx == record.StackOther {
		b, err := os.ReadFile(filepath.Join(c.proc, strconv.Itoa(pid), "comm"))
		if pid <= 0 || err != nil || !slices.Contains(c.comms, strings.TrimSpace(string(b))) {
			c.guess = c.guess || launched
			return
		}
	}
	if pid > 0 {
		c.pids[pid] = ctx
	}
}

// Client is Add of a client, for the runner's hook.
func (c *Contexts) Client(pid int) { c.Add(pid, record.StackClient) }

// LabProcess is the context of a process a lab runs (lab.Processes), by
// its name: an overlay router ("router-HOST"), a delay line, or another
// daemon ("flanneld-HOST", "etcd", "stress-HOST") named without its host.
func LabProcess(name string) string {
	switch {
	case strings.HasPrefix(name, "router-"):
		return record.StackRouter
	case strings.HasPrefix(name, "delayline"):
		return record.StackDelayline
	}
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		name = name[:i]
	}
	return record.StackDaemon + name
}

// daemons are the programs, by the names the kernel keeps (15
// characters), whose samples are "daemon:NAME": the engines, a cluster's
// agents, the CNIs' daemons.
var daemons = []string{"dockerd", "containerd", "containerd-shim", "runc", "kubelet", "kube-apiserver",
	"kube-controller", "kube-scheduler", "kube-proxy", "etcd", "flanneld", "cilium-agent", "cilium-operator",
	"cilium-envoy", "coredns", "ovs-vswitchd", "ovsdb-server"}

// Of is a sample's context: idle for pid 0 outside softirq, cnperf for
// the runner, the context Add gave its pid, a daemon by its name; else
// other. When the runner could not name some of its servers or clients
// by PID (a pod's), a cnperf process it did not name is taken for one:
// a server while it runs after the cell, a client once gone (clients
// live for a cell, servers for the run).
func (c *Contexts) Of(pid int, name string, softirq bool) string {
	switch {
	case pid == 0 && !softirq:
		return record.StackIdle
	case pid == 0:
		return record.StackOther
	case pid == c.self:
		return record.StackRunner
	}
	if ctx, ok := c.pids[pid]; ok {
		return ctx
	}
	if ctx, ok := c.looked[pid]; ok {
		return ctx
	}
	ctx := record.StackOther
	switch {
	case slices.Contains(daemons, name):
		ctx = record.StackDaemon + name
	case c.guess && slices.Contains(c.comms, name):
		ctx = record.StackClient
		if _, err := os.Stat(filepath.Join(c.proc, strconv.Itoa(pid))); err == nil {
			ctx = record.StackServer
		}
	}
	c.looked[pid] = ctx
	return ctx
}
