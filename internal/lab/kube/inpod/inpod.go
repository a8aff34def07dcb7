// Package inpod is what cnperf runs inside a pod of the kubernetes driver,
// where the driver reaches processes only through exec: Hold keeps the pod
// alive, Run ties a server's or client's life to the exec stream that
// started it, Usage and Bound read a process's counters and ports from
// inside the pod (its PID and network namespaces).
package inpod

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/record"
)

// Lines Run writes on stderr for the driver, which takes them out of what
// it passes on: the process's PID first, its usage last.
const (
	PIDPrefix   = "cnperf-pod pid "
	UsagePrefix = "cnperf-pod usage "
)

// Grace is how long Run waits after SIGTERM before SIGKILL.
const Grace = 3 * time.Second

// Hold waits for SIGTERM or SIGINT: the pod's main process, which the
// kubelet stops when the pod is deleted.
func Hold() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}

// Run starts cnperf with args and waits for it. It stops it (SIGTERM,
// then SIGKILL after Grace) when stdin ends: the driver closes the exec
// stream's stdin to stop a server, and a driver that dies closes it too,
// so nothing it started outlives it. It prints the process's PID first and
// its usage (rusage) last on stderr, and exits with its code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "cnperf pod run: %v\n", err)
		return 1
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "cnperf pod run: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "%s%d\n", PIDPrefix, cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	var werr error
	select {
	case werr = <-done:
	case <-eof:
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case werr = <-done:
		case <-time.After(Grace):
			_ = cmd.Process.Kill()
			werr = <-done
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		user := time.Duration(ru.Utime.Nano()).Seconds()
		sys := time.Duration(ru.Stime.Nano()).Seconds()
		b, _ := json.Marshal(record.Usage{Source: "rusage", CPUSeconds: user + sys, UserSeconds: user,
			SystemSeconds: sys, MemoryPeak: ru.Maxrss * 1024})
		fmt.Fprintf(stderr, "%s%s\n", UsagePrefix, b)
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return code
		}
		return 1 // killed by a signal
	}
	if werr != nil {
		return 1
	}
	return 0
}

// Usage prints a running process's usage from /proc as JSON.
func Usage(pid int, stdout io.Writer) error {
	pu, err := cost.ProcUsage(pid)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(record.Usage{Source: "proc", CPUSeconds: pu.UserSeconds + pu.SystemSeconds,
		UserSeconds: pu.UserSeconds, SystemSeconds: pu.SystemSeconds, MemoryPeak: pu.PeakRSS, MemoryCurrent: pu.RSS})
}

// BoundProtocols are the protocols Bound reads the tables of
// (/proc/PID/net/tcp, udp and their IPv6 twins).
var BoundProtocols = []string{"tcp", "udp"}

// Bound prints "yes" when process pid has bound port over every protocol,
// else "no".
func Bound(pid, port int, protocols []string, stdout io.Writer) {
	if namespace.Bound(pid, port, protocols) {
		fmt.Fprintln(stdout, "yes")
		return
	}
	fmt.Fprintln(stdout, "no")
}

// Split takes Run's own lines out of its stderr: the writer it returns
// passes every other line to w and calls pid and usage with what Run said;
// its Close returns once every line is handled.
func Split(w io.Writer, pid func(int), usage func(record.Usage)) io.WriteCloser {
	pr, pw := io.Pipe()
	s := &splitter{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, PIDPrefix):
				var n int
				if _, err := fmt.Sscanf(strings.TrimPrefix(line, PIDPrefix), "%d", &n); err == nil {
					pid(n)
				}
			case strings.HasPrefix(line, UsagePrefix):
				var u record.Usage
				if json.Unmarshal([]byte(strings.TrimPrefix(line, UsagePrefix)), &u) == nil {
					usage(u)
				}
			default:
				fmt.Fprintln(w, line)
			}
		}
		_, _ = io.Copy(io.Discard, pr) // a line past the bound: drain
	}()
	return s
}

type splitter struct {
	pw   *io.PipeWriter
	done chan struct{}
}

func (s *splitter) Write(p []byte) (int, error) { return s.pw.Write(p) }

func (s *splitter) Close() error {
	err := s.pw.Close()
	<-s.done
	return err
}

// MTU prints the MTU of the pod's interface dev (eth0: what the CNI gave
// the pod), for the driver's record.
func MTU(dev string, stdout io.Writer) error {
	i, err := net.InterfaceByName(dev)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, i.MTU)
	return err
}
