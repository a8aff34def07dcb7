package stream

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// taskTimes is, for each thread of this process named name, its CPU time
// so far (utime + stime, in clock ticks), from /proc/self/task/*/stat.
func taskTimes(t *testing.T, name string) map[string]int64 {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue // the thread ended
		}
		// pid (comm) state ppid ...: comm may hold spaces; it ends at the
		// last ')'. utime and stime are fields 14 and 15.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open {
			t.Fatalf("%s: unreadable stat %q", d, b)
		}
		if string(b[open+1:end]) != name {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 13 {
			t.Fatalf("%s: short stat %q", d, b)
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[filepath.Base(d)] = ut + st
	}
	return out
}

// busy counts the threads in after whose CPU time grew since before.
func busy(before, after map[string]int64) int {
	n := 0
	for tid, v := range after {
		if b, ok := before[tid]; ok && v > b {
			n++
		}
	}
	return n
}

// TestThreadsFromProc runs -P 4 tests and counts, from /proc, the threads
// that sent and received while they ran: named threads whose CPU time grew
// between the end of the first interval and of the fourth. With one thread
// the single loop sends from an unnamed thread, as it always has.
func TestThreadsFromProc(t *testing.T) {
	for _, tc := range []struct {
		name             string
		threads          int
		wantSend, wantRx int
	}{
		{"-P 4", 4, 4, 4},
		{"-P 4 --threads 2", 2, 2, 2},
		{"-P 4 --threads 1", 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := startServer(t)
			var mu sync.Mutex
			var send, recv [2]map[string]int64
			n := 0
			emit := func(iv Interval) {
				if iv.Side != SideSender || iv.Stream != StreamSum {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				n++
				switch n {
				case 1:
					send[0], recv[0] = taskTimes(t, senderThread), taskTimes(t, receiverThread)
				case 4:
					send[1], recv[1] = taskTimes(t, senderThread), taskTimes(t, receiverThread)
				}
			}
			res, err := Run(context.Background(), Config{Addr: addr, Duration: 1500 * time.Millisecond,
				Interval: 250 * time.Millisecond, Parallel: 4, Threads: tc.threads}, emit)
			if err != nil {
				t.Fatal(err)
			}
			if res.Threads != tc.threads {
				t.Errorf("result says %d threads, want %d", res.Threads, tc.threads)
			}
			if res.ReceiverBytes == 0 {
				t.Errorf("nothing received: %+v", res)
			}
			mu.Lock()
			defer mu.Unlock()
			if send[1] == nil {
				t.Fatalf("only %d intervals", n)
			}
			if got := busy(send[0], send[1]); got != tc.wantSend {
				t.Errorf("%d %s threads sent (CPU time %v -> %v), want %d", got, senderThread, send[0], send[1], tc.wantSend)
			}
			if got := busy(recv[0], recv[1]); got != tc.wantRx {
				t.Errorf("%d %s threads received (CPU time %v -> %v), want %d", got, receiverThread, recv[0], recv[1], tc.wantRx)
			}
		})
	}
}

// TestThreadsBounded: threads from outside are refused in one line naming
// --threads.
func TestThreadsBounded(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Duration: time.Second, Parallel: 4, Threads: 5}, "--threads 5: more than the 4 stream(s)"},
		{Config{Duration: time.Second, Parallel: 4, Threads: -1}, "--threads -1: must be in [1, 128]"},
		{Config{Duration: time.Second, Parallel: 128, Threads: 129}, "--threads 129: must be in [1, 128]"},
		{Config{Duration: time.Second, Parallel: 4, Threads: 2, Protocol: "udp"}, "--threads 2: only for TCP as fast as possible"},
		{Config{Duration: time.Second, Parallel: 4, Threads: 2, Rate: 1e6}, "--threads 2: only for TCP as fast as possible"},
		{Config{Duration: time.Second, Parallel: 4, Threads: 4}, ""},
		{Config{Duration: time.Second, Parallel: 4, Threads: 1, Protocol: "udp"}, ""},
	} {
		err := tc.cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%+v: error of several lines: %q", tc.cfg, err)
		}
	}
	if got := DefaultThreads(4); got < 1 || got > 4 {
		t.Errorf("DefaultThreads(4) = %d", got)
	}
}
