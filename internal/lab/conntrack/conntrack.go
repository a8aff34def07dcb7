// Package conntrack reads the kernel's connection tracking in a network
// namespace (its entries and its drop counters) and sets the machine's
// table size for a lab: net.netfilter.nf_conntrack_max is one global
// value, writable only from the initial namespace (read-only in the
// others since Linux 4.x), so a lab that lowers it lowers it for every
// namespace, and keeps the value it found in its state directory so that
// removing the lab, or cleaning up after a crash, puts it back.
package conntrack

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Files the kernel keeps. Stat is read through thread-self: /proc/net is
// the thread group leader's namespace, not the namespace the reading
// thread entered.
const (
	MaxFile   = "/proc/sys/net/netfilter/nf_conntrack_max"
	countFile = "/proc/sys/net/netfilter/nf_conntrack_count"
	statFile  = "/proc/thread-self/net/stat/nf_conntrack"
	slabFile  = "/proc/slabinfo"
	// savedFile is the lab's record of the value it replaced.
	savedFile = "conntrack_max.orig"
)

// Stat is the kernel's conntrack counters of a namespace, summed over the
// CPUs: a new connection found the table full (Drop), an unassured entry
// was evicted to make room (EarlyDrop), an entry could not be inserted
// (InsertFailed).
type Stat struct {
	Drop         int64 `json:"drop"`
	EarlyDrop    int64 `json:"early_drop"`
	InsertFailed int64 `json:"insert_failed"`
}

// Sub is s's counts since before (a counter that went back counts 0).
func (s Stat) Sub(before Stat) Stat {
	d := func(a, b int64) int64 { return max(a-b, 0) }
	return Stat{Drop: d(s.Drop, before.Drop), EarlyDrop: d(s.EarlyDrop, before.EarlyDrop), InsertFailed: d(s.InsertFailed, before.InsertFailed)}
}

// Total is every drop the counters saw.
func (s Stat) Total() int64 { return s.Drop + s.EarlyDrop + s.InsertFailed }

// Reading is a namespace's table at one moment.
type Reading struct {
	Entries int64
	Stat    Stat
}

// maxLines bounds the lines read of a /proc table (one per CPU).
const maxLines = 8192

// ParseStat sums /proc/net/stat/nf_conntrack: a header naming the
// columns, then one line of hexadecimal counters per CPU.
func ParseStat(s string) (Stat, error) {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) < 2 || len(lines) > maxLines {
		return Stat{}, fmt.Errorf("conntrack stat: %d lines", len(lines))
	}
	cols := map[string]int{}
	for i, name := range strings.Fields(lines[0]) {
		cols[name] = i
	}
	var st Stat
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		get := func(name string) (int64, error) {
			i, ok := cols[name]
			if !ok || i >= len(f) {
				return 0, fmt.Errorf("conntrack stat: no column %q", name)
			}
			v, err := strconv.ParseUint(f[i], 16, 32)
			return int64(v), err
		}
		for _, c := range []struct {
			name string
			to   *int64
		}{{"drop", &st.Drop}, {"early_drop", &st.EarlyDrop}, {"insert_failed", &st.InsertFailed}} {
			v, err := get(c.name)
			if err != nil {
				return Stat{}, fmt.Errorf("conntrack stat: %w", err)
			}
			*c.to += v
		}
	}
	return st, nil
}

// ParseObjectSize reads the nf_conntrack cache's object size, in bytes,
// from /proc/slabinfo (its fourth field, objsize); false when absent.
func ParseObjectSize(s string) (int, bool) {
	for i, line := range strings.Split(s, "\n") {
		if i > maxLines*4 {
			break
		}
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "nf_conntrack" {
			n, err := strconv.Atoi(f[3])
			return n, err == nil && n > 0 && n <= 1<<20
		}
	}
	return 0, false
}

// ObjectSize is the nf_conntrack slab object's size on this machine (0
// when /proc/slabinfo does not tell: no conntrack, or not root).
func ObjectSize() int {
	b, err := os.ReadFile(slabFile)
	if err != nil {
		return 0
	}
	n, _ := ParseObjectSize(string(b))
	return n
}

// Read reads the calling thread's namespace's table (run it inside the
// namespace); false when the namespace tracks no connections (the
// module is not loaded).
func Read() (Reading, bool, error) {
	b, err := os.ReadFile(countFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Reading{}, false, nil
	}
	if err != nil {
		return Reading{}, false, err
	}
	n, err := parseCount(string(b))
	if err != nil {
		return Reading{}, false, fmt.Errorf("%s: %w", countFile, err)
	}
	b, err = os.ReadFile(statFile)
	if err != nil {
		return Reading{}, false, err
	}
	st, err := ParseStat(string(b))
	return Reading{Entries: n, Stat: st}, true, err
}

// parseCount reads a sysctl's one whole number.
func parseCount(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a count, got %q", strings.TrimSpace(s))
	}
	return n, nil
}

// Max is the machine's nf_conntrack_max (0 when conntrack is not loaded).
func Max() int64 {
	b, err := os.ReadFile(MaxFile)
	if err != nil {
		return 0
	}
	n, _ := parseCount(string(b))
	return n
}

// SetMax sets nf_conntrack_max to n for the lab whose state directory is
// dir (under root, where every lab's is), keeping there first the value
// it replaces and n. Labs of one run that set the same value share the
// machine's original; a lab that wants another value than one already
// set is refused in one line: the machine has only one.
func SetMax(root, dir string, n int) error {
	orig, err := Free(root, dir, n)
	if err != nil {
		return err
	}
	if orig < 0 {
		b, err := os.ReadFile(MaxFile)
		if err != nil {
			return fmt.Errorf("conntrack_max: %w (is nf_conntrack loaded?)", err)
		}
		if orig, err = parseCount(string(b)); err != nil {
			return fmt.Errorf("conntrack_max: %s: %w", MaxFile, err)
		}
	}
	saved := filepath.Join(dir, savedFile)
	if _, err := os.Stat(saved); err != nil { // set once: a second call keeps the first original
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(saved, fmt.Appendf(nil, "%d %d\n", orig, n), 0o600); err != nil {
			return fmt.Errorf("conntrack_max: keep the machine's value: %w", err)
		}
	}
	if err := os.WriteFile(MaxFile, []byte(strconv.Itoa(n)), 0o644); err != nil {
		return fmt.Errorf("conntrack_max: set net.netfilter.nf_conntrack_max to %d: %w", n, err)
	}
	return nil
}

// Free refuses n when another lab under root set another value, and
// returns the machine's original value such a lab kept (-1: none did).
func Free(root, dir string, n int) (orig int64, err error) {
	orig = -1
	for _, o := range others(root, dir) {
		was, set, err := readSaved(o)
		if err != nil {
			return 0, err
		}
		if set != int64(n) {
			return 0, fmt.Errorf("conntrack_max %d: lab %s has set net.netfilter.nf_conntrack_max to %d; the machine has one value",
				n, filepath.Base(filepath.Dir(o)), set)
		}
		orig = was
	}
	return orig, nil
}

// others are the other labs' saved values under root.
func others(root, dir string) []string {
	all, _ := filepath.Glob(filepath.Join(root, "*", savedFile))
	var out []string
	for _, o := range all {
		if filepath.Dir(o) != dir {
			out = append(out, o)
		}
	}
	return out
}

// readSaved reads a lab's saved file: the machine's value and the lab's.
func readSaved(path string) (orig, set int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 2 {
		if orig, err = parseCount(f[0]); err == nil {
			set, err = parseCount(f[1])
		}
	}
	if len(f) != 2 || err != nil {
		return 0, 0, fmt.Errorf("%s: want the machine's nf_conntrack_max and the lab's, got %q", path, strings.TrimSpace(string(b)))
	}
	return orig, set, nil
}

// Restore puts back the nf_conntrack_max that the lab whose state
// directory is dir replaced, when it set one and is the last lab under
// root that holds it, and forgets it.
func Restore(root, dir string) error {
	saved := filepath.Join(dir, savedFile)
	orig, _, err := readSaved(saved)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(others(root, dir)) == 0 {
		if err := os.WriteFile(MaxFile, []byte(strconv.FormatInt(orig, 10)), 0o644); err != nil {
			return fmt.Errorf("restore net.netfilter.nf_conntrack_max %d: %w", orig, err)
		}
	}
	return os.Remove(saved)
}
