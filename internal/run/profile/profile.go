// Package profile samples the stacks of every CPU of the machine during a
// cell, kernel and user, with the perf tool, and folds them by what each
// sample ran (Fold, Contexts) into the cell's stacks file.
//
// perf rather than perf_event_open from Go: perf resolves kernel symbols
// (kallsyms, modules), user symbols of every binary and frame-pointer call
// chains, and keeps up with a process's maps, which would otherwise be
// reimplemented here; a fresh Debian machine gets it with one package
// (linux-perf). It runs once per cell: started with its events off, turned
// on and off through its control descriptors (acknowledged, so the window
// is the cell's), and its data file is read by perf script after the cell,
// outside any cell's time, then removed.
package profile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// maxData bounds perf's data file per cell: perf stops recording when it
// is reached, and the profile then covers less than the cell (Seconds).
const maxData = "512M"

// ackWait bounds the wait for perf's acknowledgement of a command or its
// exit: perf answers at once unless it hangs.
const ackWait = 30 * time.Second

// Check says whether this machine can profile, before anything is built:
// perf installed and kernel symbols readable (else an error that is bad
// input, naming what to do), and perf able to sample every CPU (else an
// error that is the machine's: machine is true).
func Check() (machine bool, err error) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return false, errors.New("profile on: needs the perf tool; install it (Debian: apt-get install linux-perf; scripts/install-deps.sh profile)")
	}
	if b, err := os.ReadFile("/proc/sys/kernel/kptr_restrict"); err == nil && strings.TrimSpace(string(b)) == "2" {
		return false, errors.New("profile on: kernel.kptr_restrict is 2, which hides the kernel's symbols even from root (set it to 1 to profile)")
	}
	dir, err := os.MkdirTemp("", "cnperf-perf")
	if err != nil {
		return true, err
	}
	defer os.RemoveAll(dir)
	out, err := exec.Command(perf, "record", "-q", "-a", "-g", "-B", "-N", "-o", filepath.Join(dir, "check.data"), "--", "true").CombinedOutput()
	if err != nil {
		paranoid, _ := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
		return true, fmt.Errorf("profile on: perf cannot sample every CPU (kernel.perf_event_paranoid %s): %v: %s", strings.TrimSpace(string(paranoid)), err, lastLine(out))
	}
	return false, nil
}

// Session is perf recording every CPU for one cell.
type Session struct {
	hz       int
	data     string
	cmd      *exec.Cmd
	ctl      *os.File // perf's control descriptor: "enable", "disable"
	ack      *os.File // its acknowledgements
	stderr   tail
	exited   chan struct{}
	exitedAt time.Time
	on, off  time.Time
}

// Start starts perf sampling every CPU hz times a second into data (a
// file it removes) and returns once the sampling is on.
func Start(data string, hz int) (*Session, error) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(data), 0o755); err != nil {
		return nil, err
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	s := &Session{hz: hz, data: data, ctl: ctlW, ack: ackR, exited: make(chan struct{})}
	s.cmd = exec.Command(perf, "record", "-q", "-a", "-g", "-F", strconv.Itoa(hz), "-B", "-N", "-D", "-1",
		"--control", "fd:3,4", "--max-size", maxData, "-o", data)
	s.cmd.ExtraFiles = []*os.File{ctlR, ackW}
	s.cmd.Stderr = &s.stderr
	// Its own process group: a terminal's Ctrl-C reaches cnperf, which
	// ends the cell and then perf itself; perf dies with cnperf.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	err = s.cmd.Start()
	ctlR.Close()
	ackW.Close()
	if err != nil {
		s.ctl.Close()
		s.ack.Close()
		return nil, fmt.Errorf("profile: start perf: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		s.exitedAt = time.Now()
		close(s.exited)
	}()
	if err := s.command("enable"); err != nil {
		s.Discard()
		return nil, err
	}
	s.on = time.Now()
	return s, nil
}

// command sends perf a control command and waits for its ack.
func (s *Session) command(c string) error {
	fail := func(err error) error {
		select {
		case <-s.exited: // its stderr is complete
			return fmt.Errorf("profile: perf %s: %w: %s", c, err, lastLine(s.stderr.b))
		default:
			return fmt.Errorf("profile: perf %s: %w", c, err)
		}
	}
	if _, err := s.ctl.WriteString(c + "\n"); err != nil {
		return fail(err)
	}
	if err := s.ack.SetReadDeadline(time.Now().Add(ackWait)); err != nil {
		return fail(err)
	}
	// perf writes "ack\n" and, in some versions, the string's NUL.
	var got []byte
	b := make([]byte, 1)
	for len(got) < 8 {
		if _, err := s.ack.Read(b); err != nil {
			return fail(err)
		}
		switch {
		case b[0] == 0 && len(got) == 0:
		case b[0] == '\n' && string(got) == "ack":
			return nil
		default:
			got = append(got, b[0])
		}
	}
	return fail(fmt.Errorf("answered %q", got))
}

// Disable ends the sampling at the cell's end: perf keeps what it has.
// When perf stopped before (its data file reached maxData), the sampling
// ended then.
func (s *Session) Disable() error {
	select {
	case <-s.exited:
		s.off = s.exitedAt
		return nil
	default:
	}
	if err := s.command("disable"); err != nil {
		s.Discard()
		return err
	}
	s.off = time.Now()
	return nil
}

// Finish stops perf, folds its samples under their contexts into the
// stacks file at runDir/file and returns the cell's profile; perf's data
// file is removed.
func (s *Session) Finish(runDir, file string, ctx *Contexts) (*record.CellProfile, error) {
	defer s.Discard()
	if s.off.IsZero() {
		if err := s.Disable(); err != nil {
			return nil, err
		}
	}
	if err := s.stop(); err != nil {
		return nil, err
	}
	cmd := exec.Command(s.cmd.Path, "script", "-i", s.data, "-F", "comm,pid,tid,ip,sym,dso")
	var stderr tail
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("profile: perf script: %w", err)
	}
	stacks, sum, ferr := Fold(bufio.NewReaderSize(out, 256<<10), ctx)
	if ferr != nil {
		_ = cmd.Process.Kill()
	}
	if err := cmd.Wait(); ferr == nil && err != nil {
		ferr = fmt.Errorf("profile: perf script: %w: %s", err, lastLine(stderr.b))
	}
	if ferr != nil {
		return nil, ferr
	}
	if err := record.WriteStacks(filepath.Join(runDir, file), stacks); err != nil {
		return nil, err
	}
	return &record.CellProfile{Hz: s.hz, CPUs: runtime.NumCPU(), Seconds: s.off.Sub(s.on).Seconds(),
		Samples: sum.Samples, Stacks: len(stacks), DroppedSamples: sum.DroppedSamples, DroppedStacks: sum.DroppedStacks,
		ByContext: sum.ByContext, File: file}, nil
}

// stop ends perf (SIGINT, so that it writes its file's header) and waits
// for it; SIGKILL if it does not end.
func (s *Session) stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
		return nil
	case <-time.After(ackWait):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("profile: perf did not end within %s of SIGINT: killed", ackWait)
	}
}

// Discard ends perf if it runs and removes its data file.
func (s *Session) Discard() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.ctl.Close()
	s.ack.Close()
	_ = os.Remove(s.data)
	_ = os.Remove(s.data + ".old")
}

// tail keeps the last 4 KiB written to it: a tool's stderr, of which an
// error quotes the last line.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - 4<<10; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
