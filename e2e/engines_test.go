package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/presets"
)

// enginePort is where the stand-in machines' engines listen on TCP.
const enginePort = 2375

// machines builds the stand-ins for real machines: emulated hosts siege,
// ping and pong on a switch, ping and pong each running a dockerd that
// also listens on tcp://ITS-ADDRESS:2375. Tests reach the engines from
// siege's namespace, as from a machine on their network. It returns the
// engines' URLs by host, and siege's namespace.
func machines(t *testing.T, name string) (map[string]string, string) {
	t.Helper()
	bare, err := drivers.Catalog().Mode("bare")
	if err != nil {
		t.Fatal(err)
	}
	self, err := owner.Self()
	if err != nil {
		t.Fatal(err)
	}
	l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: bare, Port: 9, Owner: self,
		Topology: lab.ClientServers([]string{"siege", "ping", "pong"}, false)})
	if err != nil {
		t.Fatalf("machines: %v", err)
	}
	t.Cleanup(func() {
		if err := firstErr(engine.Remove(name), drivers.Catalog().Down(name)); err != nil {
			t.Errorf("remove the machines: %v", err)
		}
	})
	set := engine.NewSet(name, l.Switch, self.String())
	set.TCPPort = enginePort
	var hosts []engine.Host
	urls := map[string]string{}
	for _, h := range l.Hosts[1:] {
		hosts = append(hosts, engine.Host{Name: h.Name, NS: h.NS, Addr: h.Addr})
		urls[h.Name] = fmt.Sprintf("tcp://%s:%d", h.Addr, enginePort)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := set.Start(ctx, hosts); err != nil {
		t.Fatalf("engines on the machines: %v", err)
	}
	return urls, l.Hosts[0].NS
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runIn runs the cnperf binary with args in namespace ns.
func runIn(t *testing.T, ns, bin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := namespace.Do(ns, cmd.Start); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	return stdout.String(), stderr.String(), err
}

// TestQuickPresetOnEnginesOverTCP runs the quick preset (one instance, a
// tenth of its sizes) on Docker Engines of other machines, reached over
// TCP: every mode of it, the
// overlay's swarm formed across them, from a third machine where siege
// runs. The run records the engines by URL, every request succeeds, and
// afterwards the engines hold none of cnperf's containers or networks and
// are in no swarm.
func TestQuickPresetOnEnginesOverTCP(t *testing.T) {
	testutil.RequireDocker(t)
	bin := testutil.Binary(t)
	// Registered first, so it runs last: after the machines are removed.
	t.Cleanup(func() { assertNothingLeft(t, bin) })
	urls, siege := machines(t, "tengines")
	quick, err := presets.Read("quick")
	if err != nil {
		t.Fatal(err)
	}
	// One instance and a tenth of quick's sizes (500 of them, ten cells a
	// mode): what runs on the engines is every mode, each size range and
	// the swarm, not quick's statistics.
	doc := string(quick)
	for _, r := range [][2]string{{"driver: netns", "driver: docker"}, {"instances: 3", "instances: 1"}, {"coverage: 0.01 ", "coverage: 0.001 "}} {
		if !strings.Contains(doc, r[0]) {
			t.Fatalf("the quick preset no longer says %q", r[0])
		}
		doc = strings.Replace(doc, r[0], r[1], 1)
	}
	doc += fmt.Sprintf("engines:\n  hosts: {ping: '%s', pong: '%s'}\n", urls["ping"], urls["pong"])
	dir := filepath.Join(t.TempDir(), "run")
	stdout, stderr, err := runIn(t, siege, bin, "run", writeSpec(t, doc), "-o", dir)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	t.Logf("run:\n%s\n%s", stdout, lastLines(stderr, 5))
	m := readMeta(t, dir)
	standInOverlayFiles(t, m)
	if m.Status != "complete" || len(m.Modes) != 5 {
		t.Fatalf("status %q, %d modes; want complete, 5", m.Status, len(m.Modes))
	}
	// bare's reference is a host-network sandbox on an engine elsewhere.
	network := map[string]string{"bare": "", "host": "", "bridge": "bridge", "macvlan": "macvlan", "overlay": "overlay"}
	for _, mm := range m.Modes {
		for _, ep := range mm.Lab.Endpoints {
			d := ep.Docker
			if d == nil || d.DockerHost != urls[ep.Host] || ep.NS != "" || d.Version == "" || !strings.HasPrefix(d.Image, "cnperf/workload:") {
				t.Errorf("%s on %s: endpoint %+v (docker %+v), want a sandbox on %s and no namespace here", mm.Mode, ep.Host, ep, d, urls[ep.Host])
				continue
			}
			got := ""
			if d.Network != nil {
				got = d.Network.Driver
			}
			if got != network[mm.Mode] {
				t.Errorf("%s on %s: network driver %q, want %q", mm.Mode, ep.Host, got, network[mm.Mode])
			}
		}
	}
	good, bad := map[string]int{}, 0
	for _, s := range readSamples(t, dir) {
		if s.OK() {
			good[s.Mode]++
		} else {
			bad++
		}
	}
	for _, mm := range m.Modes {
		if good[mm.Mode] != 1500 { // 500 sizes, 3 repetitions
			t.Errorf("%s: %d good samples, want 1500", mm.Mode, good[mm.Mode])
		}
	}
	if bad > 0 {
		t.Errorf("%d failed samples", bad)
	}
	for h, u := range urls {
		checkEngineClean(t, siege, h, u)
	}
}

// standInOverlayFiles removes, once the test ends, the load-balancer
// sandbox files of the run's overlay networks. libnetwork writes them under
// /var/lib/docker/network/files whatever an engine's data root, and leaves
// them when the network is removed: on a real machine that is Docker's own
// directory, but the stand-in machines' engines are this machine's, and
// their lab does not know the run's networks (the run made them through
// the API, as on any remote engine). Runs before the machines' removal, so
// that it finds the default paths empty and removes them.
func standInOverlayFiles(t *testing.T, m record.Meta) {
	ids := map[string]bool{}
	for _, mm := range m.Modes {
		for _, ep := range mm.Lab.Endpoints {
			if ep.Docker == nil || ep.Docker.Network == nil {
				continue
			}
			if n := ep.Docker.Network; n.Driver == "overlay" && n.ID != "" && !strings.ContainsAny(n.ID, "/.") {
				ids[n.ID] = true
			}
		}
	}
	t.Cleanup(func() {
		for id := range ids {
			if err := os.RemoveAll(filepath.Join("/var/lib/docker/network/files", "lb_"+id)); err != nil {
				t.Errorf("the stand-in machines' overlay files: %v", err)
			}
		}
	})
}

// TestEngineThatDoesNotAnswer: a spec naming an engine nobody serves is
// refused in one line naming the host and URL, exit 2, nothing built.
func TestEngineThatDoesNotAnswer(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	doc := "name: nobody\ndriver: docker\nmodes: [bare, host]\nengines: {hosts: {ping: 'tcp://127.0.0.1:1', pong: 'tcp://127.0.0.1:1'}}\n"
	cmd := exec.Command(bin, "run", writeSpec(t, doc), "-o", filepath.Join(t.TempDir(), "run"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	msg := strings.TrimSpace(stderr.String())
	if code != 2 || strings.Count(msg, "\n") > 0 || !strings.Contains(msg, "engines.hosts.ping: engine tcp://127.0.0.1:1 does not answer") {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line naming engines.hosts.ping and its URL", code, msg)
	}
	assertNothingLeft(t, bin)
}

// checkEngineClean fails if the engine of host holds anything labelled as
// cnperf's, or is still in a swarm.
func checkEngineClean(t *testing.T, ns, host, url string) {
	t.Helper()
	// The client's connections are dialled on other threads: from ns
	// through its dialer.
	cli, err := client.NewClientWithOpts(client.WithHost(url), client.WithDialContext(namespace.Dialer(ns)), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	err = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		f := filters.NewArgs(filters.Arg("label", engine.LabLabel))
		cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
		if err != nil {
			return err
		}
		ns, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
		if err != nil {
			return err
		}
		info, err := cli.Info(ctx)
		if err != nil {
			return err
		}
		if len(cs) > 0 || len(ns) > 0 || info.Swarm.LocalNodeState != "inactive" {
			t.Errorf("engine of %s after the run: %d containers, %d networks of cnperf's, swarm %q", host, len(cs), len(ns), info.Swarm.LocalNodeState)
		}
		return nil
	}()
	if err != nil {
		t.Errorf("engine of %s: %v", host, err)
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
