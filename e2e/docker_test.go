package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/testutil"
)

// writeSpec writes a spec file into a temporary directory.
func writeSpec(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDriverComparison runs ping-pong on both drivers side by side: every
// mode on the netns driver and again on real Docker Engines as MODE@docker.
func TestDriverComparison(t *testing.T) {
	testutil.RequireDocker(t)
	bin := testutil.Binary(t)
	dir := filepath.Join(t.TempDir(), "run")
	spec := writeSpec(t, "name: drivers-e2e\ndrivers: [netns, docker]\nmodes: [bare, host, bridge, macvlan, overlay]\n"+
		"pingpong: {max_size: 100000, coverage: 0.001, repetitions: 2, chunk: 50}\n")
	cmd := exec.Command(bin, "run", spec, "-o", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	assertNothingLeft(t, bin)
	m := readMeta(t, dir)
	keys := []string{"bare", "host", "bridge", "macvlan", "overlay", "host@docker", "bridge@docker", "macvlan@docker", "overlay@docker"}
	if m.Status != "complete" || len(m.Modes) != len(keys) {
		t.Fatalf("status %q, %d modes; want complete, %d", m.Status, len(m.Modes), len(keys))
	}
	perMode := map[string]int{}
	for _, s := range readSamples(t, dir) {
		if s.OK() {
			perMode[s.Mode]++
		}
	}
	for i, k := range keys {
		if m.Modes[i].Mode != k {
			t.Errorf("mode %d is %q, want %q", i, m.Modes[i].Mode, k)
		}
		if perMode[k] != 200 {
			t.Errorf("%s: %d good samples, want 200", k, perMode[k])
		}
		if !strings.Contains(stdout.String(), k) {
			t.Errorf("summary lacks %s:\n%s", k, stdout.String())
		}
	}
	checkDockerEndpoints(t, m)
}

// dockerSpec is a ping-pong run on the docker driver long enough to
// interrupt.
const dockerSpec = "name: docker-long\ndriver: docker\nmodes: [bridge]\nreference: bridge\n" +
	"pingpong: {max_size: 100000, coverage: 0.5, repetitions: 3, chunk: 20}\n"

// TestDockerdDiesMidRun kills the dockerd of the pong host: the run stops,
// keeps its samples, says which daemon died and leaves nothing behind.
func TestDockerdDiesMidRun(t *testing.T) {
	testutil.RequireDocker(t)
	bin := testutil.Binary(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", writeSpec(t, dockerSpec), "-o", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitSamples(t, dir, 50)
	pidFiles, _ := filepath.Glob(filepath.Join(engine.RunRoot, "*", "pong", "dockerd.cnperf-pid"))
	if len(pidFiles) != 1 {
		_ = cmd.Process.Kill()
		t.Fatalf("dockerd pid files of pong: %v", pidFiles)
	}
	b, _ := os.ReadFile(pidFiles[0])
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("pid file %s: %q", pidFiles[0], b)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the run did not stop after dockerd died\nstderr:\n%s", stderr.String())
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want 1\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "dockerd on pong exited") {
		t.Errorf("the error should name the dead daemon:\n%s", stderr.String())
	}
	assertNothingLeft(t, bin)
	m := readMeta(t, dir)
	if m.Status != "failed" || !strings.Contains(m.Error, "dockerd on pong") {
		t.Errorf("status %q, error %q", m.Status, m.Error)
	}
	if n := len(readSamples(t, dir)); n < 50 {
		t.Errorf("kept %d samples, want >= 50", n)
	}
}

// TestCleanAfterKilledDockerRun kills cnperf itself mid-run: its engines,
// containers and their state stay until `cnperf clean` removes them all.
func TestCleanAfterKilledDockerRun(t *testing.T) {
	testutil.RequireDocker(t)
	bin := testutil.Binary(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", writeSpec(t, dockerSpec), "-o", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitSamples(t, dir, 50)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if labs, _ := engine.Labs(); len(labs) == 0 {
		t.Fatal("a killed run should leave its engines behind for clean to find")
	}
	out, err := exec.Command(bin, "clean").CombinedOutput()
	if err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	assertNothingLeft(t, bin)
	if samples := readSamples(t, dir); len(samples) < 50 {
		t.Errorf("killed run kept %d samples, want >= 50", len(samples))
	}
}

// TestExistingEngine runs the single-host modes on an engine cnperf did not
// start for the run (--docker-host, over the spec's netns driver), a test
// of each server kind (stream's over TCP, rr's over UDP, the UDP
// listener's): every workload on every mode is TestSocketPresetOnEveryMode's.
// The stand-in for a user's engine is a lab's dockerd in its own namespace,
// and cnperf runs inside that namespace, as it would run on the user's
// machine. Afterwards the engine holds nothing labelled for the run: only
// what it held before (and the workload image, which stays, as documented).
func TestExistingEngine(t *testing.T) {
	testutil.RequireDocker(t)
	bin := testutil.Binary(t)
	if out, err := exec.Command(bin, "lab", "up", "userengine", "--driver", "docker", "--mode", "host", "--hosts", "c,s").CombinedOutput(); err != nil {
		t.Fatalf("stand-in engine: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(bin, "lab", "down", "userengine").Run() })
	sock := "unix://" + filepath.Join(engine.RunRoot, "userengine", "s", "docker.sock")
	docker := func(args ...string) string {
		out, err := exec.Command("docker", append([]string{"-H", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	beforeC, beforeN := docker("ps", "-a", "--format", "{{.Names}}"), docker("network", "ls", "--format", "{{.Name}}")

	dir := filepath.Join(t.TempDir(), "run")
	spec := writeSpec(t, "name: userengine\ndriver: netns\nmodes: [bare, host, bridge, macvlan, overlay]\nreference: bare\ntests:\n"+
		"  - {workload: stream, duration: 1s}\n  - {workload: rr, protocol: udp, duration: 1s}\n  - {workload: datagram, rate: 50M, count: 2000}\n")
	cmd := exec.Command("nsenter", "--net=/run/netns/cnperf-userengine-s", bin, "run", spec,
		"--modes", "bare,host,bridge", "--docker-host", sock, "-o", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	m := readMeta(t, dir)
	if m.Status != "complete" || len(m.Cells) != 3*3 {
		t.Fatalf("status %q, %d cells", m.Status, len(m.Cells))
	}
	for _, c := range m.Cells {
		if c.Error != "" || c.Samples < 2 {
			t.Errorf("cell %d (%s on %s): %d records, error %q", c.Index, c.Case, c.Mode, c.Samples, c.Error)
		}
	}
	for _, mm := range m.Modes {
		if !mm.Lab.Local || mm.Lab.DockerHost != sock {
			t.Errorf("%s: lab %+v, want local on %s", mm.Mode, mm.Lab, sock)
		}
	}
	if c, n := docker("ps", "-a", "--format", "{{.Names}}"), docker("network", "ls", "--format", "{{.Name}}"); c != beforeC || n != beforeN {
		t.Errorf("the engine holds\n%s\n%s\nafter the run, and held\n%s\n%s\nbefore", c, n, beforeC, beforeN)
	}
	if out, err := exec.Command(bin, "lab", "down", "userengine").CombinedOutput(); err != nil {
		t.Fatalf("lab down: %v\n%s", err, out)
	}
	assertNothingLeft(t, bin)
}
