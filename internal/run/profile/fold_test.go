package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// testContexts are contexts over a /proc of the test's: pid 5725 a
// server, 5691 a client, 5746 the runner, 7 a cnperf process still
// running that the runner did not start.
func testContexts(t *testing.T) *Contexts {
	proc := t.TempDir()
	for pid, comm := range map[int]string{7: "cnperf", 5725: "vet", 100: "cnperf", 101: "bash"} {
		if err := os.MkdirAll(filepath.Join(proc, fmt.Sprint(pid)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, fmt.Sprint(pid), "comm"), []byte(comm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Contexts{pids: map[int]string{5725: record.StackServer, 5691: record.StackClient}, self: 5746,
		comms: []string{"cnperf", "cnperf-prof"}, proc: proc, looked: map[int]string{}}
}

// TestFoldRecordedScript folds perf script's output recorded on a 2-CPU
// KVM guest (-F comm,pid,tid[,cpu],ip,sym,dso): idle, a daemon, softirq
// under a user process, a system call.
func TestFoldRecordedScript(t *testing.T) {
	f, err := os.Open("testdata/perf-script.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stacks, sum, err := Fold(f, testContexts(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"idle": 2, "daemon:kube-apiserver": 2, "client": 1, "cnperf": 1, "server": 1}
	if sum.Samples != 7 || len(sum.ByContext) != len(want) {
		t.Fatalf("summary %+v, want 7 samples by %v", sum, want)
	}
	for c, n := range want {
		if sum.ByContext[c] != n {
			t.Errorf("%s: %d samples, want %d", c, sum.ByContext[c], n)
		}
	}
	var total uint64
	for s, n := range stacks {
		total += n
		if _, _, err := stackLineCheck(s, n); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if total != sum.Samples || sum.DroppedSamples != 0 {
		t.Errorf("stacks hold %d samples of %d, %d dropped", total, sum.Samples, sum.DroppedSamples)
	}
	idle := "idle;common_startup_64_[k];x86_64_start_kernel_[k];__pfx_clear_bss_[k];start_kernel_[k];rest_init_[k];cpu_startup_entry_[k];do_idle_[k];cpuidle_enter_[k];cpuidle_enter_state_[k];default_enter_idle_[k];default_idle_[k];pv_native_safe_halt_[k]"
	if stacks[idle] != 2 {
		t.Errorf("the two idle samples are not one stack %q: %v", idle, stacks)
	}
	for s := range stacks {
		switch {
		case strings.HasPrefix(s, "server;"):
			if !strings.HasPrefix(s, "server;runtime.goexit.abi0;") || !strings.HasSuffix(s, ";entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_openat_[k];do_sys_openat2_[k];do_filp_open_[k];path_openat_[k];ext4_create_[k];__ext4_new_inode_[k];find_inode_bit_[k];recently_deleted_[k]") {
				t.Errorf("server stack %s: want the system call, root first, kernel frames marked", s)
			}
		case strings.HasPrefix(s, "client;"):
			if !strings.HasSuffix(s, ";runtime.(*spanSet).pop;asm_sysvec_apic_timer_interrupt_[k];sysvec_apic_timer_interrupt_[k];__irq_exit_rcu_[k];handle_softirqs_[k]") {
				t.Errorf("client stack %s: want the softirq on top of its user frames", s)
			}
		case strings.HasPrefix(s, "daemon:kube-apiserver;"):
			if !strings.Contains(s, "[unknown]") {
				t.Errorf("daemon stack %s: want its unnamed frames", s)
			}
		}
	}
}

// stackLineCheck is record's reading of a line, so that every stack Fold
// makes is one ReadStacks takes.
func stackLineCheck(stack string, n uint64) (string, uint64, error) {
	dir, err := os.MkdirTemp("", "stacks")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.folded.gz")
	if err := record.WriteStacks(path, record.Stacks{stack: n}); err != nil {
		return "", 0, err
	}
	got, err := record.ReadStacks(path)
	return stack, got[stack], err
}

func TestContextsOf(t *testing.T) {
	c := testContexts(t)
	c.Add(100, record.StackClient) // a cnperf process: taken
	c.Add(101, record.StackServer) // not cnperf's (a pod's PID that is another's here): refused, so guess
	c.Add(102, record.StackRouter) // a lab's process, by the lab's word
	c.Add(-1, record.StackServer)  // no PID
	for _, tc := range []struct {
		pid     int
		comm    string
		softirq bool
		want    string
	}{
		{0, "swapper", false, "idle"},
		{0, "swapper", true, "other"},
		{5746, "cnperf-prof", false, "cnperf"},
		{5725, "vet", false, "server"},
		{100, "cnperf", false, "client"},
		{101, "bash", false, "other"},
		{102, "cnperf", false, "router"},
		{7, "cnperf", false, "server"}, // unknown, still running: a pod's server (guessed)
		{8, "cnperf", false, "client"}, // unknown, gone: a pod's client
		{9, "flanneld", true, "daemon:flanneld"},
		{10, "containerd-shim", false, "daemon:containerd-shim"},
		{11, "kworker/0:1", true, "other"},
		{-1, ":-1", false, "other"}, // perf's "-1/-1": no thread
	} {
		if got := c.Of(tc.pid, tc.comm, tc.softirq); got != tc.want {
			t.Errorf("Of(%d, %s, softirq %v) = %s, want %s", tc.pid, tc.comm, tc.softirq, got, tc.want)
		}
	}
	known := testContexts(t) // every PID the runner gave was this machine's: no guess
	known.Add(100, record.StackServer)
	if got := known.Of(7, "cnperf", false); got != "other" {
		t.Errorf("an unknown cnperf process with every server known: %s, want other", got)
	}
	for name, want := range map[string]string{"router-h1": "router", "delayline": "delayline", "delayline-l1": "delayline",
		"flanneld-h1": "daemon:flanneld", "etcd": "daemon:etcd", "ovs-vswitchd-h2": "daemon:ovs-vswitchd", "stress-server": "daemon:stress"} {
		if got := LabProcess(name); got != want {
			t.Errorf("LabProcess(%s) = %s, want %s", name, got, want)
		}
	}
}

// script writes n samples of pid 5691 (a client), sample i with the
// frames frames(i) (leaf first).
func script(n int, frames func(i int) []string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("cnperf 5691/5691\n")
		for _, f := range frames(i) {
			fmt.Fprintf(&b, "\t%x %s (/usr/bin/cnperf)\n", 0x1000+i, f)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestFoldCaps: past record.MaxStacks distinct stacks, or maxBytes of
// text, the stacks with the fewest samples are cut, counted and folded
// into "client;[truncated]", so the totals hold.
func TestFoldCaps(t *testing.T) {
	long := strings.Repeat("x", maxFrame+100) // cut to maxFrame
	for _, tc := range []struct {
		name   string
		n      int
		frames func(i int) []string
	}{
		{"distinct stacks", record.MaxStacks + 50, func(i int) []string { return []string{fmt.Sprintf("f%d", i%(record.MaxStacks+10)), "main"} }},
		{"bytes", 200, func(i int) []string {
			fr := make([]string, maxDepth+10) // deeper than maxDepth: kept to it
			for j := range fr {
				fr[j] = fmt.Sprintf("%d%s", i%60, long)
			}
			return fr
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stacks, sum, err := Fold(strings.NewReader(script(tc.n, tc.frames)), testContexts(t))
			if err != nil {
				t.Fatal(err)
			}
			var total uint64
			size := 0
			for s, n := range stacks {
				total += n
				size += len(s) + 22
				if strings.Count(s, ";") > maxDepth+1 {
					t.Errorf("a stack of %d frames", strings.Count(s, ";"))
				}
			}
			cut := stacks["client;"+record.TruncatedFrame]
			t.Logf("%d samples, %d stacks kept, %d cut of %d samples", sum.Samples, len(stacks), sum.DroppedStacks, sum.DroppedSamples)
			if total != uint64(tc.n) || sum.Samples != uint64(tc.n) || cut == 0 || cut != sum.DroppedSamples || sum.DroppedStacks == 0 {
				t.Errorf("%d samples in %d stacks (%d in [truncated]), summary %+v", total, len(stacks), cut, sum)
			}
			if len(stacks) > record.MaxStacks || size > maxBytes {
				t.Errorf("%d stacks, %d bytes: past the caps", len(stacks), size)
			}
			path := filepath.Join(t.TempDir(), record.StacksFile(0))
			if err := record.WriteStacks(path, stacks); err != nil {
				t.Fatal(err)
			}
			if _, err := record.ReadStacks(path); err != nil {
				t.Errorf("read back: %v", err)
			}
		})
	}
}

func TestFoldRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\tffff sym (dso)\n", "line 1: a frame before any sample"},
		{"cnperf x/1\n", `line 1: "x/1": not PID/TID`},
		{"cnperf\n", "line 1: not \"COMM PID/TID\""},
		{"cnperf 1/1\n\tzz sym (dso)\n", `line 2: "zz": not a frame's address`},
		{"cnperf 1/1\n\t1 " + strings.Repeat("a", maxLine) + "\n", "token too long"},
	} {
		_, _, err := Fold(strings.NewReader(tc.in), testContexts(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: %v, want %s", tc.in, err, tc.want)
		}
	}
}

// FuzzFold: whatever perf script prints, Fold does not panic, its stacks
// hold every sample it counted, and record reads back what it folded.
func FuzzFold(f *testing.F) {
	b, err := os.ReadFile("testdata/perf-script.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("a b 1/2 [000]\n\tffffffffffffffff x;y z (mod)\n\t0 (\n\n\n"))
	f.Add([]byte(":-1 -1/-1\n\tffffffff81369742 handle_softirqs ([kernel.kallsyms])\n\n"))
	f.Add([]byte("swapper 0/0\n\tffffffff81369742 handle_softirqs ([kernel.kallsyms])\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &Contexts{pids: map[int]string{}, self: -1, comms: []string{"cnperf"}, proc: t.TempDir(), looked: map[int]string{}}
		stacks, sum, err := Fold(strings.NewReader(string(data)), c)
		if err != nil {
			return
		}
		var total uint64
		for _, n := range stacks {
			total += n
		}
		if total != sum.Samples {
			t.Fatalf("stacks hold %d samples of %d", total, sum.Samples)
		}
		path := filepath.Join(t.TempDir(), "s.folded.gz")
		if err := record.WriteStacks(path, stacks); err != nil {
			t.Fatal(err)
		}
		if _, err := record.ReadStacks(path); err != nil {
			t.Fatalf("read back: %v", err)
		}
	})
}
