// Package e2e runs the cnperf binary as a user would, as root, and checks
// what it leaves: results on disk, and nothing of cnperf's on the machine.
// These tests share the machine's namespaces with the lab tests: run the
// suite with `go test -p 1` (the Makefile does).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
)

func readMeta(t *testing.T, dir string) record.Meta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m record.Meta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	return m
}

func readSamples(t *testing.T, dir string) []record.Sample {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record.Sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s record.Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil || s.Workload != "pingpong" {
			continue // a line cut by a kill, or the machine's CPU samples
		}
		out = append(out, s)
	}
	return out
}

func TestQuickStyleRunOfTinyPreset(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", "--preset", "tiny", "-o", dir, "--label", "machine=e2e")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	assertNothingLeft(t, bin)

	// The table: one row per mode, with ratios to bare.
	for _, want := range []string{"mode", "transfer MB/s", "xbare", "bare", "overlay", "results: " + dir} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}

	m := readMeta(t, dir)
	if m.Status != "complete" || m.Finished == nil {
		t.Errorf("status = %q, finished = %v", m.Status, m.Finished)
	}
	if m.Machine.Kernel == "" || m.Machine.CPUs < 1 || m.Machine.CPUModel == "" {
		t.Errorf("machine description incomplete: %+v", m.Machine)
	}
	if m.ReceiveWindow <= 0 {
		t.Errorf("tcp receive window not recorded")
	}
	if len(m.Modes) != 2 || m.Modes[0].Mode != "bare" || m.Modes[1].Mode != "overlay" {
		t.Fatalf("modes = %+v", m.Modes)
	}
	// The overlay's containers have the 1450-byte MTU, offloads and sysctls recorded.
	var sawOverlayMTU, sawOffloads, sawRmem, sawFirewall bool
	for _, ns := range m.Modes[1].Namespaces {
		for _, l := range ns.Links {
			if strings.HasSuffix(ns.Name, "-ping-c") && l.Name == "eth0" && l.MTU == 1450 {
				sawOverlayMTU = true
			}
			if len(l.Offloads) > 0 {
				sawOffloads = true
			}
		}
		if ns.Sysctls["net.ipv4.tcp_rmem"] != "" {
			sawRmem = true
		}
		if strings.Contains(ns.Firewall, "cnperf:") {
			sawFirewall = true
		}
	}
	if !sawOverlayMTU || !sawOffloads || !sawRmem || !sawFirewall {
		t.Errorf("overlay description: mtu1450=%v offloads=%v tcp_rmem=%v firewall=%v", sawOverlayMTU, sawOffloads, sawRmem, sawFirewall)
	}
	if m.Modes[1].Usage["ping"].CPUSeconds <= 0 || m.Modes[1].Usage["ping"].Source != "cgroup" {
		t.Errorf("overlay ping's cgroup CPU not recorded: %+v", m.Modes[1].Usage)
	}
	// Pong builds its 1 MiB body buffer at start (every body streams from
	// it): its cgroup must be charged for it, which holds only if the server
	// waited until it was moved in.
	if peak := m.Modes[1].Usage["pong"].MemoryPeak; peak < 1<<20 {
		t.Errorf("overlay pong's cgroup memory peak %d < its 1 MiB buffer: start-up was not charged", peak)
	}
	if u := m.Modes[0].Usage["pong"]; u.Source != "proc" || u.MemoryPeak < 1<<20 {
		t.Errorf("bare pong's /proc usage: %+v", u)
	}
	if m.Memory == nil || m.Memory.CommittedBefore <= 0 || m.Modes[1].Bytes <= 0 {
		t.Errorf("memory %+v, overlay bytes %d", m.Memory, m.Modes[1].Bytes)
	}
	// tiny: 20 sizes x 2 repetitions x 2 modes, cells of 5 sizes interleaved.
	if len(m.Cells) != 8 || m.Cells[0].Mode == m.Cells[2].Mode {
		t.Errorf("cells = %d, first modes %v/%v: want 8, rotated", len(m.Cells), m.Cells[0].Mode, m.Cells[2].Mode)
	}
	samples := readSamples(t, dir)
	if len(samples) != 80 {
		t.Fatalf("samples = %d, want 80", len(samples))
	}
	perMode := map[string]int{}
	for _, s := range samples {
		perMode[s.Mode]++
		if !s.OK() || s.DurationMS <= 0 || s.LatencyMS < s.DurationMS || s.Time.IsZero() || s.Labels["machine"] != "e2e" {
			t.Errorf("bad sample: %+v", s)
		}
	}
	if perMode["bare"] != 40 || perMode["overlay"] != 40 {
		t.Errorf("per mode = %v", perMode)
	}

	// Export to ppbench's CSV: one row per mode and size.
	out, err := exec.Command(bin, "export", dir, "--format", "ppbench").Output()
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("ppbench csv: %v", err)
	}
	if len(rows) != 1+40 || rows[0][0] != "Machine Tag" || rows[1][0] != "e2e" || !strings.HasPrefix(rows[1][2], "/mping/") {
		t.Errorf("ppbench csv: %d rows, first %v %v", len(rows), rows[0], rows[1])
	}
}

// longSpec writes a spec that runs long enough to be interrupted.
func longSpec(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "long.yaml")
	spec := "name: long\nmodes: [bare, bridge]\npingpong:\n  max_size: 100000\n  coverage: 0.5\n  repetitions: 3\n  chunk: 20\n"
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitSamples waits until the run has stored at least n samples.
func waitSamples(t *testing.T, dir string, n int) {
	t.Helper()
	err := poll.Until(context.Background(), 30*time.Second, 50*time.Millisecond, func() (bool, error) {
		b, err := os.ReadFile(filepath.Join(dir, "samples.jsonl"))
		return err == nil && bytes.Count(b, []byte(`"workload":"pingpong"`)) >= n, nil
	})
	if err != nil {
		t.Fatalf("no %d samples within 30s: %v", n, err)
	}
}

func TestInterruptedRunKeepsSamplesAndCleansUp(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", longSpec(t), "-o", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitSamples(t, dir, 200)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130\nstderr:\n%s", err, stderr.String())
	}
	assertNothingLeft(t, bin)
	m := readMeta(t, dir)
	samples := readSamples(t, dir)
	if m.Status != "interrupted" || len(samples) < 200 {
		t.Errorf("status %q with %d samples", m.Status, len(samples))
	}
	stored := 0
	for _, c := range m.Cells {
		stored += c.Samples
	}
	if stored != len(samples) {
		t.Errorf("cells account for %d samples, file has %d", stored, len(samples))
	}
	if !strings.Contains(stdout.String(), "interrupted") {
		t.Errorf("the table should say the run was interrupted:\n%s", stdout.String())
	}
}

// labsOf returns the labs on the machine whose owner is the process pid.
func labsOf(t *testing.T, pid int) map[string]bool {
	t.Helper()
	infos, err := drivers.Catalog().List()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, l := range infos {
		if l.Owner.PID == pid {
			out[l.Name] = true
		}
	}
	return out
}

// TestCleanSparesLiveRunsAndRemovesKilledOnes runs two cnperf runs at once,
// kills one, and runs `cnperf clean` while the other goes on: clean removes
// the killed run's labs, leaves the live run's and a user's namespace that
// only looks like cnperf's, and the live run completes with every cell good.
func TestCleanSparesLiveRunsAndRemovesKilledOnes(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	liveDir, killedDir := filepath.Join(t.TempDir(), "live"), filepath.Join(t.TempDir(), "killed")
	liveSpec := filepath.Join(t.TempDir(), "live.yaml")
	if err := os.WriteFile(liveSpec, []byte("name: live\nmodes: [bare, bridge]\npingpong:\n  max_size: 100000\n  coverage: 0.03\n  repetitions: 2\n  chunk: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	live := exec.Command(bin, "run", liveSpec, "-o", liveDir)
	var liveOut bytes.Buffer
	live.Stdout, live.Stderr = &liveOut, &liveOut
	killed := exec.Command(bin, "run", longSpec(t), "-o", killedDir)
	for _, c := range []*exec.Cmd{live, killed} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = killed.Process.Kill() })
	waitSamples(t, killedDir, 50)
	waitSamples(t, liveDir, 50)
	liveLabs, killedLabs := labsOf(t, live.Process.Pid), labsOf(t, killed.Process.Pid)
	if len(liveLabs) != 2 || len(killedLabs) != 2 {
		t.Fatalf("want 2 labs per run, got %v and %v", liveLabs, killedLabs)
	}
	_ = killed.Process.Kill() // no chance to clean up
	_ = killed.Wait()

	// A user's namespace named like a lab's, with a process inside: not
	// marked as cnperf's, so not cnperf's to remove.
	userNS := "cnperf-e2euser-1"
	if err := namespace.Create(userNS, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = namespace.Delete(userNS) })
	sleeper := exec.Command("sleep", "60")
	if err := namespace.Do(userNS, sleeper.Start); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })

	out, err := exec.Command(bin, "clean").CombinedOutput()
	if err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	for name := range killedLabs {
		if !strings.Contains(string(out), "removed lab "+name+"\n") {
			t.Errorf("clean did not say it removed the killed run's lab %s:\n%s", name, out)
		}
	}
	for name := range liveLabs {
		if !strings.Contains(string(out), "left lab "+name+": its owner PID") {
			t.Errorf("clean did not say it left the live run's lab %s:\n%s", name, out)
		}
	}
	now := labsOf(t, live.Process.Pid)
	for name := range liveLabs {
		if !now[name] {
			t.Errorf("clean removed lab %s of a live run", name)
		}
	}
	if got := labsOf(t, killed.Process.Pid); len(got) > 0 {
		t.Errorf("the killed run's labs are left: %v", got)
	}
	if !namespace.Exists(userNS) || sleeper.ProcessState != nil || syscall.Kill(sleeper.Process.Pid, 0) != nil {
		t.Errorf("clean touched the user's namespace %s or its process", userNS)
	}

	if err := live.Wait(); err != nil {
		t.Fatalf("the live run failed after clean: %v\n%s", err, liveOut.String())
	}
	m := readMeta(t, liveDir)
	if m.Status != "complete" || len(m.Cells) == 0 {
		t.Fatalf("live run: status %s, %d cells", m.Status, len(m.Cells))
	}
	for _, c := range m.Cells {
		if c.Error != "" || c.Failed > 0 {
			t.Errorf("live run's cell %d on %s: error %q, %d failed", c.Index, c.Mode, c.Error, c.Failed)
		}
	}
	if samples := readSamples(t, killedDir); len(samples) < 50 {
		t.Errorf("killed run kept %d samples, want >= 50", len(samples))
	}
	assertNothingLeft(t, bin)
	if out, err := exec.Command(bin, "clean").CombinedOutput(); err != nil || strings.Contains(string(out), "removed lab "+firstKey(killedLabs)) {
		t.Errorf("second clean: %v %s", err, out)
	}
}

func firstKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

func TestNonRootIsToldAboutCapNetAdmin(t *testing.T) {
	testutil.RequireRoot(t) // to drop privileges, we must have them
	// The user 'nobody' must be able to reach the binary.
	pub, err := os.MkdirTemp("", "cnperf-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(pub) })
	if err := os.Chmod(pub, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(pub, "cnperf")
	if b, err := os.ReadFile(testutil.Binary(t)); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatalf("copy binary: %v", err)
	}
	cmd := exec.Command(bin, "run", "--preset", "tiny", "-o", filepath.Join(pub, "r"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit = %v, want 2: %s", err, out)
	}
	if !strings.Contains(string(out), "CAP_NET_ADMIN") || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Errorf("want one line naming CAP_NET_ADMIN, got %q", out)
	}
}

func TestLabCommandsByHand(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	run := func(args ...string) (string, int) {
		out, err := exec.Command(bin, args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	t.Cleanup(func() { run("lab", "down", "e2ehand") })
	if out, code := run("lab", "up", "e2ehand", "--mode", "macvlan"); code != 0 || !strings.Contains(out, "198.18.0.102") {
		t.Fatalf("lab up: %d %s", code, out)
	}
	if out, code := run("lab", "up", "e2ehand", "--mode", "bare"); code == 0 || !strings.Contains(out, "already exists") {
		t.Errorf("second lab up: %d %s", code, out)
	}
	if out, _ := run("lab", "ls"); !strings.Contains(out, "e2ehand") || !strings.Contains(out, "macvlan") {
		t.Errorf("lab ls: %s", out)
	}
	// A lab made by hand belongs to nobody: clean leaves it.
	if out, code := run("clean"); code != 0 || !strings.Contains(out, "left lab e2ehand: made by 'cnperf lab up'") {
		t.Errorf("clean with a hand-made lab: %d %s", code, out)
	}
	if out, _ := run("lab", "ls"); !strings.Contains(out, "e2ehand") {
		t.Errorf("clean removed the hand-made lab: %s", out)
	}
	out, code := run("lab", "exec", "e2ehand", "server1", "--container", "--", "cat", "/proc/net/dev")
	if code != 0 || !strings.Contains(out, "eth0") || strings.Contains(out, "cnbr0") {
		t.Errorf("lab exec: %d %s", code, out)
	}
	if out, code := run("lab", "exec", "e2ehand", "nosuch", "--", "true"); code != 2 || !strings.Contains(out, "cnperf-e2ehand-nosuch") {
		t.Errorf("exec on a missing host: %d %s", code, out)
	}
	for i := 0; i < 2; i++ {
		if out, code := run("lab", "down", "e2ehand"); code != 0 {
			t.Fatalf("lab down #%d: %d %s", i+1, code, out)
		}
	}
	assertNothingLeft(t, bin)
}
