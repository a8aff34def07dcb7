package flannel_test

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	fl "github.com/cnperf/cnperf/internal/lab/flannel"
	"github.com/cnperf/cnperf/internal/lab/modes/flannel"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestMain removes the cnperf binary the tests built (testutil.Binary).
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// want is what each backend's flanneld gives on the lab's 1500-byte NICs.
var want = map[string]struct{ mtu, port, vni int }{
	"flannel-vxlan":   {1450, 8472, 1},
	"flannel-udp":     {1472, 8285, 0},
	"flannel-host-gw": {1500, 0, 0},
}

// TestFlannelModesCarryWorkloads runs ping-pong and a stream test on the
// three flannel modes side by side, through run.Run like any mode: every
// cell completes, run.json records what flanneld leased and said, and
// nothing of the labs is left (namespaces, links with them, state and
// etcd data, daemons and their cgroups).
func TestFlannelModesCarryWorkloads(t *testing.T) {
	testutil.RequireRoot(t)
	for _, m := range flannel.Modes() {
		testutil.SkipUnlessNeeds(t, m)
	}
	cat := drivers.Catalog()
	for _, tc := range []struct{ name, yaml string }{
		{"stream", `name: flannel-stream
modes: [flannel-vxlan, flannel-udp, flannel-host-gw]
reference: flannel-host-gw
` + runtest.ShortStream},
		{"pingpong", `name: flannel-pingpong
modes: [flannel-vxlan, flannel-udp, flannel-host-gw]
reference: flannel-host-gw
` + runtest.SmallPingPong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := runtest.Run(t, cat, tc.name, tc.yaml)
			for _, mm := range res.Meta.Modes {
				checkRecord(t, mm)
			}
			leftovers(t, res.Meta.ID+"_")
		})
	}
}

// TestFlannelOnDocker is Zismer's (2016) setup itself: each host's dockerd
// started with the --bip and --mtu its flanneld leased, the sandboxes on
// docker0; ping-pong and a stream test carry across, run.json records
// the leases, the sandboxes' addresses are in them, and nothing is left.
func TestFlannelOnDocker(t *testing.T) {
	testutil.RequireDocker(t)
	for _, m := range flannel.Modes() {
		testutil.SkipUnlessNeeds(t, m)
	}
	cat := drivers.Catalog()
	for _, tc := range []struct{ name, yaml string }{
		{"stream", `name: flannel-docker-stream
driver: docker
modes: [flannel-vxlan]
reference: flannel-vxlan
` + runtest.ShortStream},
		{"pingpong", `name: flannel-docker-pingpong
driver: docker
modes: [flannel-vxlan]
reference: flannel-vxlan
` + runtest.SmallPingPong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := runtest.Run(t, cat, tc.name, tc.yaml)
			for _, mm := range res.Meta.Modes {
				checkRecord(t, mm)
				for _, e := range mm.Lab.Endpoints {
					if e.Docker == nil {
						t.Errorf("%s: endpoint %s is not a sandbox", mm.Mode, e.Role)
					}
				}
			}
			leftovers(t, res.Meta.ID+"_")
		})
	}
}

// checkRecord: run.json names the version flanneld reports, the backend,
// the MTU, ports and VNI flannel made, etcd's URL on the first server
// host, and a distinct lease inside Flannel's network for each host with
// containers, which the containers' Internal addresses are in.
func checkRecord(t *testing.T, mm record.ModeMeta) {
	t.Helper()
	f := mm.Lab.Flannel
	if f == nil {
		t.Fatalf("%s: no flannel record", mm.Mode)
	}
	w := want[mm.Setup]
	if f.Version != fl.Version || "flannel-"+f.Backend != mm.Setup || f.MTU != w.mtu || f.Port != w.port || f.VNI != w.vni || f.Network != lab.FlannelNetwork {
		t.Errorf("%s: recorded %+v, want version %s, MTU %d, port %d, VNI %d", mm.Mode, f, fl.Version, w.mtu, w.port, w.vni)
	}
	if !strings.HasPrefix(f.Etcd, "http://198.18.0.") {
		t.Errorf("%s: etcd at %s, want a host's underlay address", mm.Mode, f.Etcd)
	}
	network := netip.MustParsePrefix(lab.FlannelNetwork)
	leases := map[string]netip.Prefix{}
	for _, l := range f.Leases {
		p, err := netip.ParsePrefix(l.Subnet)
		if err != nil || p.Bits() != 24 || !network.Contains(p.Addr()) || slices.Contains(mapValues(leases), p) {
			t.Errorf("%s: lease %+v (all %+v)", mm.Mode, l, f.Leases)
		}
		leases[l.Host] = p
	}
	for _, e := range mm.Lab.Endpoints {
		ap, err := netip.ParseAddrPort(e.Internal)
		if err != nil || !leases[e.Host].Contains(ap.Addr()) {
			t.Errorf("%s: endpoint %s internal %s is not in its host's lease %s", mm.Mode, e.Role, e.Internal, leases[e.Host])
		}
	}
	if len(leases) == 0 {
		t.Errorf("%s: no leases recorded", mm.Mode)
	}
	// Each container's NIC has the MTU subnet.env gave.
	for _, e := range mm.Lab.Endpoints {
		mtu := -1
		for _, ns := range mm.Namespaces {
			for _, l := range ns.Links {
				if ns.Name == e.NS && l.Name == "eth0" {
					mtu = l.MTU
				}
			}
		}
		if mtu != f.MTU {
			t.Errorf("%s: endpoint %s's eth0 in %s has MTU %d, want subnet.env's %d", mm.Mode, e.Role, e.NS, mtu, f.MTU)
		}
	}
}

func mapValues(m map[string]netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// leftovers fails for anything of labs named with prefix left on the
// machine: namespaces (the links, routes and rules in them go with them),
// state directories (etcd's data, subnet.env), cgroups (the daemons).
func leftovers(t *testing.T, prefix string) {
	t.Helper()
	if nss, _ := namespace.List(lab.Prefix + prefix); len(nss) > 0 {
		t.Errorf("namespaces left: %v", nss)
	}
	entries, _ := os.ReadDir(lab.StateRoot)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			t.Errorf("state left: %s", filepath.Join(lab.StateRoot, e.Name()))
		}
	}
	for _, l := range process.CgroupLabs() {
		if strings.HasPrefix(l, prefix) {
			t.Errorf("cgroups left for lab %s", l)
		}
	}
}

// TestFlanneldFailureIsOneLine: a flanneld that leases nothing fails the
// lab in one line naming the host and the daemon's own last log line, and
// the half-built lab (etcd and its data among it) is removed. The flanneld
// is a stand-in that says what it cannot do and exits, as the real one
// does when etcd refuses it.
func TestFlanneldFailureIsOneLine(t *testing.T) {
	testutil.RequireRoot(t)
	if _, err := fl.Etcd(); err != nil {
		testutil.SkipUnlessNeeds(t, flannel.Mode{Backend: fl.VXLAN})
	}
	cache := t.TempDir()
	bin := filepath.Join(cache, fl.Version, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n[ \"$1\" = --version ] && { echo " + fl.Version + "; exit 0; }\necho 'E1127 main.go:1] failed to lease: no etcd answered' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "flanneld"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, ".flanneld.stamp"), []byte(fl.Version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(fl.CacheEnv, cache)
	m, err := drivers.Catalog().Mode("flannel-vxlan")
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("tflfail%d", os.Getpid()%10000)
	_, err = drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"c", "s"}, false), Port: 8080, Exe: testutil.Binary(t)})
	t.Cleanup(func() { _ = drivers.Catalog().Down(name) })
	if err == nil {
		t.Fatal("a lab whose flanneld leased nothing came up")
	}
	msg := err.Error()
	t.Log(msg)
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "host s: flanneld exited") || !strings.Contains(msg, "failed to lease: no etcd answered") {
		t.Errorf("error %q: want one line naming host s and flanneld's last log line", msg)
	}
	leftovers(t, name)
}

// TestFlannelRefusesChains: none of the backends runs on a chain of hosts,
// refused before anything is built.
func TestFlannelRefusesChains(t *testing.T) {
	for _, m := range flannel.Modes() {
		if err := netns.CheckChainMode(m); err == nil || !strings.Contains(err.Error(), m.Name()) || !strings.Contains(err.Error(), "chain of hosts: ") {
			t.Errorf("%s on a chain: %v, want a refusal naming it", m.Name(), err)
		}
	}
}

// TestNeedsNamesTheBuild: without the build, the modes say which command
// builds it, in one line.
func TestNeedsNamesTheBuild(t *testing.T) {
	t.Setenv(fl.CacheEnv, t.TempDir())
	for _, m := range flannel.Modes() {
		err := lab.CheckNeeds(m)
		if err == nil || !strings.Contains(err.Error(), fl.BuildCommand) || !strings.Contains(err.Error(), m.Name()) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming %s", m.Name(), err, fl.BuildCommand)
		}
		var f lab.Failure
		if errors.As(err, &f) {
			t.Errorf("%s: a missing build is the user's to mend (exit 2), not a Failure", m.Name())
		}
	}
}

// TestOverlayMTU: flannel-vxlan takes the overlay_mtu condition as its
// backend's MTU (the overlay's plus VXLAN's 50 bytes), so subnet.env and
// the containers say the condition's MTU; the udp backend, which sets its
// own, refuses it in one line.
func TestOverlayMTU(t *testing.T) {
	testutil.RequireRoot(t)
	for _, m := range flannel.Modes() {
		testutil.SkipUnlessNeeds(t, m)
	}
	for _, tc := range []struct {
		mode, refusal string
	}{{"flannel-vxlan", ""}, {"flannel-udp", "overlay_mtu: flannel's udp backend sets its own MTU"}} {
		t.Run(tc.mode, func(t *testing.T) {
			m, _ := drivers.Catalog().Mode(tc.mode)
			name := fmt.Sprintf("tflmtu%d_%s", os.Getpid()%10000, strings.TrimPrefix(tc.mode, "flannel-"))
			l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"c", "s1", "s2"}, false), Port: 8080,
				Exe: testutil.Binary(t), Conditions: conditions.Set{OverlayMTU: 1400}})
			t.Cleanup(func() {
				if err := drivers.Catalog().Down(name); err != nil {
					t.Error(err)
				}
				leftovers(t, name)
			})
			if tc.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refusal) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line saying %q", err, tc.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Flannel == nil || l.Flannel.MTU != 1400 {
				t.Fatalf("flannel record %+v, want MTU 1400", l.Flannel)
			}
			s1, _ := l.Endpoint("s1")
			h, err := namespace.Handle(s1.NS)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			link, err := h.LinkByName("eth0")
			if err != nil || link.Attrs().MTU != 1400 {
				t.Fatalf("container eth0: %v, MTU want 1400", err)
			}
		})
	}
}
