package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/lab/process"
)

// Another cnperf may run on this machine while the suite does: the
// "nothing left" checks judge only what this suite could have made, that
// is labs that were not there when it started and whose owner is no longer
// running (this suite's runs have all exited by the time it checks). A
// live owner's labs, or what was there before, are someone else's.

// before holds the labs (by namespace mark, cgroup, engine state) that
// existed when the suite started.
var before = labsNow()

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

func labsNow() map[string]bool {
	names := map[string]bool{}
	if infos, err := drivers.Catalog().List(); err == nil {
		for _, l := range infos {
			names[l.Name] = true
		}
	}
	for _, n := range process.CgroupLabs() {
		names[n] = true
	}
	if ls, err := engine.Labs(); err == nil {
		for _, n := range ls {
			names[n] = true
		}
	}
	return names
}

// liveForeign returns the labs whose owner, another process than this
// suite's, still runs: not this suite's to judge. Nobody's labs (lab up)
// count as foreign unless this suite names them (e2e...).
func liveForeign() map[string]bool {
	live := map[string]bool{}
	self := os.Getpid()
	if infos, err := drivers.Catalog().List(); err == nil {
		for _, l := range infos {
			if l.Owner.IsNone() && !strings.HasPrefix(l.Name, "e2e") || !l.Owner.IsNone() && l.Owner.PID != self && !l.Owner.Gone() {
				live[l.Name] = true
			}
		}
	}
	if ls, err := engine.Labs(); err == nil {
		for _, n := range ls {
			if id, err := owner.Parse(engine.Owner(n)); err == nil && !id.IsNone() && id.PID != self && !id.Gone() {
				live[n] = true
			}
		}
	}
	return live
}

// labInPath finds a lab's name in a path of cnperf's (engine state, cgroups).
var labInPath = regexp.MustCompile(`cnperf/(?:docker/|state/|ovs/)?([a-z0-9][a-z0-9_]{0,39})(?:/|$|\s)`)

// assertNothingLeft checks that nothing this suite made is left: no
// namespace, cgroup, engine state, process or mount of a lab that is
// neither someone else's live lab nor older than the suite, and nothing of
// cnperf's in the root namespace (cnperf never creates anything there).
// The test clusters named in kept are up for later tests: judged as a live
// lab of someone else's, since the test asking did not make them.
func assertNothingLeft(t *testing.T, bin string, kept ...string) {
	t.Helper()
	live := liveForeign()
	for _, n := range kept {
		live[n] = true
	}
	judged := func(name string) bool { return !before[name] && !live[name] }
	if infos, err := drivers.Catalog().List(); err == nil {
		for _, l := range infos {
			if judged(l.Name) {
				t.Errorf("lab %s left: namespaces %v", l.Name, l.Namespaces)
			}
		}
	}
	for _, n := range process.CgroupLabs() {
		if judged(n) {
			t.Errorf("cgroups of lab %s left", n)
		}
	}
	engLabs, _ := engine.Labs()
	for _, n := range engLabs {
		if judged(n) {
			t.Errorf("Docker engine state of lab %s left in %s", n, engine.RunDir(n))
		}
	}
	if ds, err := os.ReadDir(engine.DataRoot); err == nil {
		for _, d := range ds {
			if judged(d.Name()) {
				t.Errorf("Docker engine data of lab %s left in %s", d.Name(), engine.DataRoot)
			}
		}
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
	// A path of cnperf's names its lab; one that names none is judged only
	// when no one else's lab is live, and one that names a lab not judged
	// (a test cluster's daemon names the build's cache and its cluster) is
	// that lab's.
	judgedPath := func(s string) bool {
		ms := labInPath.FindAllStringSubmatch(s, -1)
		if ms == nil {
			return len(live) == 0
		}
		for _, m := range ms {
			if !judged(m[1]) {
				return false
			}
		}
		return true
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		args := bytes.ReplaceAll(b, []byte{0}, []byte{' '})
		cg, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cgroup"))
		switch {
		case bytes.HasPrefix(b, []byte(bin+"\x00")): // a server or a client of this suite's binary
			t.Errorf("cnperf process left: %s %q", p, args)
		case bytes.HasPrefix(b, []byte("/cnperf\x00")) && judgedPath(string(cg)): // the same in a Docker container
			t.Errorf("cnperf process left in a container: %s %q", p, args)
		case bytes.Contains(b, []byte("/run/cnperf/")) && judgedPath(string(args)): // dockerd, containerd, shims
			t.Errorf("Docker daemon of cnperf's left: %s %q", p, args)
		case bytes.Contains(b, []byte("docker-proxy")) && bytes.Contains(b, []byte("198.1")) && len(live) == 0:
			t.Errorf("Docker userland proxy of cnperf's left: %s %q", p, args)
		}
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "/cnperf/") && judgedPath(line) {
				t.Errorf("mount of cnperf's left: %s", line)
			}
		}
	}
	// Paths Docker uses whatever its flags say: those missing when the tests
	// started must be missing again, once no engine of cnperf's runs (a
	// test cluster's containerd uses /run/containerd too).
	if len(engLabs) == 0 && len(kept) == 0 {
		for _, p := range dockerDefaultsAbsent {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s left by cnperf's Docker engines", p)
			}
		}
	}
}

// TestLabInPath: a path names its lab wherever cnperf keeps a lab's files,
// so that another run's live processes are never taken for this suite's;
// a test cluster's daemon names the build's cache and its cluster.
func TestLabInPath(t *testing.T) {
	for _, tc := range []struct{ path, labs string }{
		{"/run/cnperf/docker/e2e_a1/dockerd.sock", "e2e_a1"},
		{"--stats /run/cnperf/state/rmihh_bare_cf36/zones/delayline.json", "rmihh_bare_cf36"},
		{"/run/cnperf/ovs/lab1/h1/db.sock", "lab1"},
		{"0::/cnperf/e2e_b2/server", "e2e_b2"},
		{"/var/cache/cnperf/k8s/v1.34.4/bin/kubelet --root-dir /run/cnperf/state/e1b/cluster/node1/kubelet", "k8s e1b"},
		{"/usr/bin/true", ""},
	} {
		var got []string
		for _, m := range labInPath.FindAllStringSubmatch(tc.path, -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != tc.labs {
			t.Errorf("labInPath(%q) finds %q, want %q", tc.path, got, tc.labs)
		}
	}
}
