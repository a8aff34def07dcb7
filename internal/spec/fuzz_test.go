package spec_test

import (
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/presets"
)

// FuzzSpec parses and validates arbitrary specs: it must never panic,
// must answer quickly with little memory (the plan's size is checked before
// anything is expanded), must refuse in one line, and what it accepts must
// have a plan within the limits.
func FuzzSpec(f *testing.F) {
	for _, n := range presets.Names() {
		b, err := presets.Read(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, h := range hostile {
		if len(h.doc) < 4096 {
			f.Add([]byte(h.doc))
		}
	}
	f.Add([]byte("name: x\npingpong: {retries: 0}\n"))
	f.Add([]byte("name: x\nconditions: {ip_family: dual}\nvariants: [{ip_family: ipv6}, {ip_family: \"6\"}]\n"))
	f.Add([]byte("name: x\ntests: [{workload: datagram, count: 1000, rate: 1T, sweep: {param: length, from: 24, to: 65507, step: 100}}]\n"))
	// The fan-out, zones, chain and calibration fields, at and past their bounds.
	f.Add([]byte("name: x\nplacement: {hosts: same, servers: 250, clients: 250}\ntests: [{workload: stream, processes: 64, sweep: {param: clients, from: 1, to: 250, step: 1}}]\n"))
	f.Add([]byte("name: x\nconditions: {zone_delay: 1h, zone_jitter: 1h, zone_loss: 99.99, zone_hosts: \"pong,ping\"}\n"))
	f.Add([]byte("name: x\ntests: [{workload: stream, duration: 6s}]\nlinks: [{link: server, delay: 10s, jitter: 10s, loss: 99.9, rate: 1000gbit, flap: {at: [0s, 1s, 2s], down: 1ms}}, {link: zones, flap: {at: [5s], down: 999ms}}]\n"))
	f.Add([]byte("name: x\ntests: [{workload: rr, duration: 3s}]\nimpairments: {slow: [{link: server, delay: 5ms}], cut: [{link: client, flap: {at: [1s], down: 1s}}]}\nvariants: [{name: clean}, {impairment: slow}, {impairment: cut}]\n"))
	f.Add([]byte("name: x\nchain: {hosts: 17}\ntests: [{workload: rr}]\n"))
	f.Add([]byte("name: x\ndriver: kubernetes\nmodes: [k8s-service]\nvariants: [{services: 20000}, {services: 20001}, {services: -1}]\n"))
	f.Add([]byte("name: x\ntests: [{workload: rr, duration: 6s}]\ndisrupt: [{component: cni-agent, node: server, at: [0s, 2s], down: restart}, {component: kube-proxy, node: client, at: [1s], down: 4999ms, cluster: a-b}]\n"))
	f.Add([]byte("name: x\ncalibrate: {from: /nonexistent, series: \"\"}\n"))
	f.Add([]byte("name: x\nmodes: [bare, bridge]\nconditions: {profile: on, profile_hz: 1000, conntrack_max: 255}\nvariants: [{profile: maybe}, {profile_hz: 48}, {conntrack_max: 16777217}]\n"))
	f.Add([]byte("name: x\nmodes: [host, bridge]\nconditions: {conntrack_max: 1500}\ntests: [{workload: conns, connections: 9999999, trickle: 1ns}]\n"))
	f.Add([]byte("name: x\nmodes: [bare, bridge]\nwaterfall: true\ntests: [{workload: rr, sweep: {param: request, from: 1, to: 9, step: 1}}]\n"))
	f.Add([]byte("name: x\ndriver: kubernetes\nmodes: [k8s-pod]\nkubernetes: {clusters: [{name: a, context: c}, {name: b, test_cluster: t, cni: bridge}]}\nvariants: [{cluster: a}, {cluster: b, node_placement: same-node}]\n"))
	// Parameters held by name: types a declaration must refuse, a field
	// no workload has, an alias, a merge key, a null.
	f.Add([]byte("name: x\ntests: [{workload: rr, request: [1], response: {a: 1}, timeout: 5, busy_poll: yes, protocol: 1}]\n"))
	f.Add([]byte("name: x\ntests: [{workload: stream, lenght: 1400, omit: 1h, copy: true, length: ~}]\n"))
	f.Add([]byte("name: x\nx: &p {length: 100}\ntests: [{workload: jitter, <<: *p, rate: *p}]\n"))
	// A size sweep's tests list through a merge key, whose node the walk
	// for the sweep's fields does not find.
	f.Add([]byte("name: x\n<<: {tests: [{workload: pingpong}]}\n"))
	// Claims at their edges: open and reversed bounds, NaN, a series no
	// mode has, an explanation naming no variant.
	f.Add([]byte("name: x\nclaims: [{id: a, says: s, source: s, metric: transfer, series: bridge, ratio: [null, null]}, {id: a, metric: t, series: nope, ratio: [2, 1], explain: {variant: v}}]\n"))
	f.Add([]byte("name: x\nclaims: [{id: B!, metric: transfer, series: bare, sizes: [10, 1], ratio: [.nan, 1]}]\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		s, err := spec.Parse(strings.NewReader(string(doc)), "fuzz.yaml")
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		// yaml.v3 itself may take a few MB on a 1 MiB document; a plan
		// expanded by mistake takes far more.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
			t.Fatalf("Parse allocated %d MB", alloc>>20)
		}
		if took > 5*time.Second {
			t.Fatalf("Parse took %s", took)
		}
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "fuzz.yaml: ") || strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line naming the source: %q", msg)
			}
			return
		}
		z, err := s.PlanSize()
		if err != nil {
			t.Fatalf("a valid spec's plan: %v", err)
		}
		links := slices.Clone(s.Links)
		for _, name := range slices.Sorted(maps.Keys(s.Impairments)) {
			links = append(links, s.Impairments[name]...)
		}
		for _, l := range links {
			if l.Flap == nil {
				continue
			}
			for _, at := range l.Flap.At {
				if end := at + l.Flap.Down; at < 0 || end <= at {
					t.Fatalf("a flap at %s for %s ends at %s", at, l.Flap.Down, end)
				}
			}
		}
		if z.Cells > spec.MaxCells || z.Labs > spec.MaxLabs || z.Sizes > spec.MaxSizes || z.Requests > spec.MaxRequests {
			t.Fatalf("plan past the limits: %+v", z)
		}
		if int64(len(s.Labs())) != z.Labs {
			t.Fatalf("%d labs, computed %d", len(s.Labs()), z.Labs)
		}
		if s.Socket() {
			cases, err := s.Cases()
			if err != nil {
				t.Fatalf("a valid spec's cases: %v", err)
			}
			units := int64(0)
			for _, c := range cases {
				units += int64(max(c.Test.Repetitions, 1))
				if c.Test.Sweep != nil {
					t.Fatalf("case %q still sweeps", c.Label)
				}
				_ = c.ClientArgs("198.18.0.2")
			}
			if units != z.Units {
				t.Fatalf("%d units, computed %d", units, z.Units)
			}
		}
		// A valid spec stays valid through its YAML (cnperf presets, run.json).
		b, err := s.YAML()
		if err != nil {
			t.Fatalf("YAML: %v", err)
		}
		if _, err := spec.Parse(strings.NewReader(string(b)), "again"); err != nil {
			t.Fatalf("its YAML does not parse back: %v\n%s", err, b)
		}
	})
}
