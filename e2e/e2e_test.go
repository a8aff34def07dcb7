// Package e2e runs the cnperf binary as a user would, as root, and checks
// what it leaves: results on disk, and nothing of cnperf's on the machine.
// These tests share the machine's namespaces with the lab tests: run the
// suite with `go test -p 1` (the Makefile does).
package e2e

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnperf/cnperf/internal/engine"
	"github.com/cnperf/cnperf/internal/netnsutil"
	"github.com/cnperf/cnperf/internal/pingpong"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/testutil"
)

// build compiles cnperf statically, as the README does.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cnperf")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/cnperf")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// assertNothingLeft checks that no namespace, root link, root firewall rule,
// cgroup or server process of cnperf's is left on the machine.
func assertNothingLeft(t *testing.T, bin string) {
	t.Helper()
	if nss, _ := netnsutil.List("cnperf-"); len(nss) > 0 {
		t.Errorf("namespaces left: %v", nss)
	}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Alias, "cnperf") {
			t.Errorf("link %s (alias %s) left in the root namespace", l.Attrs().Name, l.Attrs().Alias)
		}
	}
	for _, fw := range [][]string{{"iptables-save"}, {"nft", "list", "ruleset"}} {
		if _, err := exec.LookPath(fw[0]); err != nil {
			continue
		}
		if out, err := exec.Command(fw[0], fw[1:]...).Output(); err == nil && bytes.Contains(bytes.ToLower(out), []byte("cnperf")) {
			t.Errorf("%s: rules mentioning cnperf left in the root namespace", fw[0])
		}
	}
	if m, _ := filepath.Glob("/sys/fs/cgroup/*/cnperf"); len(m) > 0 {
		t.Errorf("cgroups left: %v", m)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		args := bytes.ReplaceAll(b, []byte{0}, []byte{' '})
		switch {
		case bytes.HasPrefix(b, []byte(bin+"\x00")), // a server or a client
			bytes.HasPrefix(b, []byte("/cnperf\x00")): // the same in a Docker container
			t.Errorf("cnperf process left: %s %q", p, args)
		case bytes.Contains(b, []byte("/run/cnperf/")): // dockerd, containerd, shims
			t.Errorf("Docker daemon of cnperf's left: %s %q", p, args)
		case bytes.Contains(b, []byte("docker-proxy")) && bytes.Contains(b, []byte("198.1")):
			t.Errorf("Docker userland proxy of cnperf's left: %s %q", p, args)
		}
	}
	for _, d := range []string{engine.RunRoot, engine.DataRoot} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("Docker engine state left: %s", d)
		}
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil && bytes.Contains(b, []byte("/cnperf/")) {
		t.Errorf("mounts of cnperf's left:\n%s", b)
	}
	// Paths Docker uses whatever its flags say: those missing when the tests
	// started must be missing again.
	for _, p := range dockerDefaultsAbsent {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left by cnperf's Docker engines", p)
		}
	}
}

// dockerDefaultsAbsent are the paths Docker and containerd use whatever
// their flags say that did not exist when the tests started.
var dockerDefaultsAbsent = func() []string {
	var out []string
	for _, p := range []string{"/etc/docker/key.json", "/var/lib/docker", "/run/docker", "/run/containerd"} {
		if _, err := os.Stat(p); err != nil {
			out = append(out, p)
		}
	}
	return out
}()

func readMeta(t *testing.T, dir string) runner.Meta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m runner.Meta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	return m
}

func readSamples(t *testing.T, dir string) []pingpong.Sample {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pingpong.Sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s pingpong.Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil || s.Workload != "pingpong" {
			continue // a line cut by a kill, or the machine's CPU samples
		}
		out = append(out, s)
	}
	return out
}

func TestQuickStyleRunOfTinyPreset(t *testing.T) {
	testutil.RequireRoot(t)
	bin := build(t)
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
	// Pong builds a 16 MiB body buffer at start: its cgroup must be charged
	// for it, which holds only if the server waited until it was moved in.
	if peak := m.Modes[1].Usage["pong"].MemoryPeak; peak < 16<<20 {
		t.Errorf("overlay pong's cgroup memory peak %d < its 16 MiB buffer: start-up was not charged", peak)
	}
	if u := m.Modes[0].Usage["pong"]; u.Source != "proc" || u.MemoryPeak < 16<<20 {
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
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, "samples.jsonl")); err == nil && bytes.Count(b, []byte(`"workload":"pingpong"`)) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %d samples within 30s", n)
}

func TestInterruptedRunKeepsSamplesAndCleansUp(t *testing.T) {
	testutil.RequireRoot(t)
	bin := build(t)
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

func TestCleanRemovesWhatAKilledRunLeft(t *testing.T) {
	testutil.RequireRoot(t)
	bin := build(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", longSpec(t), "-o", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitSamples(t, dir, 50)
	_ = cmd.Process.Kill() // no chance to clean up
	_ = cmd.Wait()
	if nss, _ := netnsutil.List("cnperf-"); len(nss) == 0 {
		t.Fatal("a killed run should leave its labs behind for clean to find")
	}
	out, err := exec.Command(bin, "clean").CombinedOutput()
	if err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "removed lab") {
		t.Errorf("clean output: %s", out)
	}
	assertNothingLeft(t, bin)
	out, err = exec.Command(bin, "clean").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "nothing of cnperf's found") {
		t.Errorf("second clean: %v %s", err, out)
	}
	if samples := readSamples(t, dir); len(samples) < 50 {
		t.Errorf("killed run kept %d samples, want >= 50", len(samples))
	}
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
	if b, err := os.ReadFile(build(t)); err != nil || os.WriteFile(bin, b, 0o755) != nil {
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
	bin := build(t)
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
