// Package owner names the process that owns what cnperf builds (labs,
// Docker engines), so that `cnperf clean` removes only what a dead process
// left and never what a live run still uses. A process is known by its PID
// and its start time (field 22 of /proc/PID/stat, in clock ticks since
// boot), so a recycled PID is not mistaken for the owner.
package owner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ID is a process. The zero ID is nobody: what `cnperf lab up` builds
// belongs to no process and stays until removed by name or `clean --all`.
type ID struct {
	PID   int
	Start uint64
}

// None is the zero ID, nobody.
var None = ID{}

// Self returns the calling process.
func Self() (ID, error) {
	return Of(os.Getpid())
}

// Of returns the running process pid.
func Of(pid int) (ID, error) {
	start, err := startTime(pid)
	if err != nil {
		return None, err
	}
	return ID{PID: pid, Start: start}, nil
}

// IsNone reports whether id is nobody.
func (id ID) IsNone() bool { return id == None }

// String is the form stored in marks: "PID.START", or "none".
func (id ID) String() string {
	if id.IsNone() {
		return "none"
	}
	return strconv.Itoa(id.PID) + "." + strconv.FormatUint(id.Start, 10)
}

// Parse reads String's form.
func Parse(s string) (ID, error) {
	if s == "none" {
		return None, nil
	}
	p, st, ok := strings.Cut(s, ".")
	if !ok {
		return None, fmt.Errorf("owner %q: want PID.START or none", s)
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return None, fmt.Errorf("owner %q: bad PID", s)
	}
	start, err := strconv.ParseUint(st, 10, 64)
	if err != nil {
		return None, fmt.Errorf("owner %q: bad start time", s)
	}
	return ID{PID: pid, Start: start}, nil
}

// Gone reports whether the owner has exited: its PID is free or now names
// another process. Nobody is never gone.
func (id ID) Gone() bool {
	if id.IsNone() {
		return false
	}
	start, err := startTime(id.PID)
	return err != nil || start != id.Start
}

// Describe says who the owner is, for people: "PID 123 (cnperf run ...)".
func (id ID) Describe() string {
	if id.IsNone() {
		return "nobody (lab up)"
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", id.PID))
	if err != nil || id.Gone() {
		return fmt.Sprintf("PID %d (exited)", id.PID)
	}
	args := strings.Fields(strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "))
	if len(args) > 4 {
		args = append(args[:4], "...")
	}
	return fmt.Sprintf("PID %d (%s)", id.PID, strings.Join(args, " "))
}

// startTime reads a process's start time from /proc/PID/stat. The command
// name (field 2) may hold spaces and parentheses, so fields are counted
// from the last ')'.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(string(b))
}

func parseStat(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("stat: no ')'")
	}
	// After ')': field 3 (state) is the first; start time is field 22.
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 {
		return 0, errors.New("stat: too few fields")
	}
	return strconv.ParseUint(f[19], 10, 64)
}
