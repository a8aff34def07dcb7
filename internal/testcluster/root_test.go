package testcluster_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/testcluster"
	"github.com/cnperf/cnperf/internal/testutil"
)

// TestMain removes the cnperf binary the tests built (testutil.Binary).
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// requireBuild skips without the Kubernetes build (CI builds it, and
// fails instead).
func requireBuild(t *testing.T) string {
	t.Helper()
	testutil.RequireRoot(t)
	o := testcluster.DefaultOptions()
	if _, err := os.Stat(filepath.Join(o.KubeBin(), "kube-apiserver")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the test cluster is not built: scripts/k8s-build.sh")
		}
		t.Skip("the test cluster is not built: scripts/k8s-build.sh")
	}
	return testutil.Binary(t)
}

// TestUpStatusDown brings a one-node cluster up, reads its status, takes
// it down twice and checks that nothing of it is left. Run it under the
// machine's lab lock.
func TestUpStatusDown(t *testing.T) {
	bin := requireBuild(t)
	name := fmt.Sprintf("cu%d", os.Getpid()%100000)
	t.Cleanup(func() { _ = exec.Command(bin, "cluster", "down", name).Run() })
	out, err := exec.Command(bin, "cluster", "up", name, "--nodes", "1").Output()
	if err != nil {
		t.Fatalf("up: %v: %s", err, stderrOf(err))
	}
	if want := testcluster.KubeconfigPath(name, false); strings.TrimSpace(string(out)) != want {
		t.Fatalf("up printed %q, want %s", out, want)
	}
	// Up again: the name is taken, refused before anything is made.
	if code, msg := run(bin, "cluster", "up", name, "--nodes", "1"); code != 2 || !strings.Contains(msg, "exists") {
		t.Errorf("second up: exit %d %q, want 2 saying it exists", code, msg)
	}
	st, err := exec.Command(bin, "cluster", "status", name).Output()
	if err != nil || !strings.Contains(string(st), "node node1") || !strings.Contains(string(st), " Ready") || !strings.Contains(string(st), "kube-apiserver") {
		t.Fatalf("status: %v\n%s", err, st)
	}
	if strings.Contains(string(st), " gone") {
		t.Errorf("a daemon is gone:\n%s", st)
	}
	for i := 0; i < 2; i++ {
		if code, msg := run(bin, "cluster", "down", name); code != 0 {
			t.Fatalf("down #%d: exit %d: %s", i+1, code, msg)
		}
		nothingLeft(t, name)
	}
	// Gone, its name is no cluster's: bad input, as any unknown name.
	if code, msg := run(bin, "cluster", "status", name); code != 2 || !strings.Contains(msg, "cluster "+name+" is not up") {
		t.Errorf("status of a cluster that is down: exit %d %q, want 2 saying it is not up", code, msg)
	}
}

// TestKilledUpRemoved kills `cluster up` while it builds (its control
// plane running, its nodes not yet): `cnperf clean` finds what it left by
// the lab's owner and removes all of it, and so does `cluster down` of the
// half-up cluster.
func TestKilledUpRemoved(t *testing.T) {
	bin := requireBuild(t)
	for i, remove := range [][]string{{"clean"}, {"cluster", "down", ""}} {
		t.Run(remove[0], func(t *testing.T) {
			name := fmt.Sprintf("ck%d%d", os.Getpid()%100000, i)
			t.Cleanup(func() { _ = exec.Command(bin, "cluster", "down", name).Run() })
			up := exec.Command(bin, "cluster", "up", name, "--nodes", "1")
			if err := up.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(90 * time.Second)
			for !hasDaemon(name, "node1-containerd") {
				if time.Now().After(deadline) {
					_ = up.Process.Kill()
					_ = up.Wait()
					t.Fatal("up never started node1's containerd")
				}
				time.Sleep(50 * time.Millisecond) // nothing announces a line in the pid file
			}
			_ = up.Process.Signal(syscall.SIGKILL)
			_ = up.Wait()
			if remove[0] == "cluster" {
				remove[2] = name
			}
			if code, msg := run(bin, remove...); code != 0 || !strings.Contains(msg, name) {
				t.Fatalf("%v: exit %d, want 0 naming %s:\n%s", remove, code, name, msg)
			}
			nothingLeft(t, name)
		})
	}
}

// hasDaemon says whether a cluster's pid file names role.
func hasDaemon(name, role string) bool {
	f, err := os.Open(filepath.Join(testcluster.Dir(name), "pids"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), " "+role) {
			return true
		}
	}
	return false
}

// nothingLeft checks what a cluster makes on the machine: namespaces,
// state, cgroups in every hierarchy, processes.
func nothingLeft(t *testing.T, name string) {
	t.Helper()
	if left, _ := namespace.List("cnperf-" + name + "-"); len(left) > 0 {
		t.Errorf("left namespaces %v", left)
	}
	if _, err := os.Stat(testcluster.Dir(name)); err == nil {
		t.Errorf("left %s", testcluster.Dir(name))
	}
	cgs, _ := filepath.Glob("/sys/fs/cgroup/*/cnperf/" + name)
	if len(cgs) > 0 {
		t.Errorf("left cgroups %v", cgs)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		s := strings.ReplaceAll(string(b), "\x00", " ")
		if err == nil && (strings.Contains(s, testcluster.Dir(name)) || strings.Contains(s, "/run/netns/cnperf-"+name+"-")) {
			t.Errorf("left process %s: %s", filepath.Base(filepath.Dir(p)), s)
		}
	}
}

// run runs cnperf and returns its exit code and what it said.
func run(bin string, args ...string) (int, string) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		return -1, err.Error()
	}
	return 0, string(out)
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
