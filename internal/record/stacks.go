package record

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Stacks are one cell's sampled call stacks, folded as flame-graph tools
// read them (stackcollapse-perf.pl's format): a stack is its frames root
// first, joined by ";", the first frame the sample's context (what it ran:
// StackServer, StackClient, ..., "daemon:NAME"), kernel frames suffixed
// KernelFrame; the value is how many samples had it.
type Stacks map[string]uint64

// The contexts a stack's first frame names. A daemon's is "daemon:" and
// its name (flanneld, etcd, cilium-agent, ...). Softirq is not a context:
// it is read from a stack's kernel frames.
const (
	StackServer    = "server"
	StackClient    = "client"
	StackRouter    = "router"    // cnperf's user-space overlay router
	StackDelayline = "delayline" // cnperf's delay line
	StackRunner    = "cnperf"    // the runner itself
	StackOther     = "other"     // anything else on the machine
	StackIdle      = "idle"
	StackDaemon    = "daemon:"
	// KernelFrame ends a kernel frame's name, as stackcollapse-perf.pl
	// --kernel writes it.
	KernelFrame = "_[k]"
	// TruncatedFrame stands for the stacks a cap cut, folded into one per
	// context so the totals hold.
	TruncatedFrame = "[truncated]"
)

// Bounds of a cell's stacks file: a run directory travels, so its reader
// trusts nothing in it. The writer keeps to them (its caps fold what
// exceeds them into TruncatedFrame), so every file cnperf writes can be
// read back.
const (
	MaxStacks         = 20000    // distinct stacks per cell
	MaxStacksBytes    = 16 << 20 // a cell's file, compressed
	MaxStacksUnpacked = 64 << 20 // ... and unpacked
)

// StacksFile is where the stacks of the cell with this index are kept,
// relative to the run directory.
func StacksFile(cell int) string {
	return filepath.Join("stacks", fmt.Sprintf("%05d.folded.gz", cell))
}

// Context is the stack's first frame: what the sample ran.
func Context(stack string) string {
	ctx, _, _ := strings.Cut(stack, ";")
	return ctx
}

// WriteStacks writes s to path (gzip'd, one "STACK COUNT" line per stack,
// sorted so a run's files compare), creating its directory.
func WriteStacks(path string, s Stacks) error {
	if len(s) > MaxStacks {
		return fmt.Errorf("write %s: %d stacks, more than %d", path, len(s), MaxStacks)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	bw := bufio.NewWriter(zw)
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(bw, "%s %d\n", k, s[k])
	}
	err = bw.Flush()
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadStacks reads a cell's stacks file within its bounds; a line that is
// not "STACK COUNT", an empty frame, a repeated stack or a count past
// 1<<40 is refused in one line naming the file and the line.
func ReadStacks(path string) (Stacks, error) {
	f, err := OpenFile(path, MaxStacksBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	lr := newLineReader(path, io.LimitReader(zr, MaxStacksUnpacked+1))
	s := Stacks{}
	var unpacked int64
	for n := 1; ; n++ {
		line, err := lr.next(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if unpacked += int64(len(line)); unpacked > MaxStacksUnpacked {
			return nil, refuse("%s unpacks to more than %s", path, sizeText(MaxStacksUnpacked))
		}
		stack, count, err := stackLine(strings.TrimRight(string(line), "\n"))
		if err != nil {
			return nil, refuse("%s line %d: %v", path, n, err)
		}
		if _, dup := s[stack]; dup {
			return nil, refuse("%s line %d: stack repeated", path, n)
		}
		if len(s) == MaxStacks {
			return nil, refuse("%s has more than %d stacks", path, MaxStacks)
		}
		s[stack] = count
	}
	return s, nil
}

func stackLine(line string) (string, uint64, error) {
	i := strings.LastIndexByte(line, ' ')
	if i <= 0 {
		return "", 0, fmt.Errorf("not \"STACK COUNT\"")
	}
	count, err := strconv.ParseUint(line[i+1:], 10, 64)
	if err != nil || count == 0 || count > 1<<40 {
		return "", 0, fmt.Errorf("count %q is not 1 to 2^40", line[i+1:])
	}
	stack := line[:i]
	for _, fr := range strings.Split(stack, ";") {
		if fr == "" || strings.ContainsAny(fr, " \t\r") {
			return "", 0, fmt.Errorf("frame %q is empty or has a blank", fr)
		}
	}
	return stack, count, nil
}
