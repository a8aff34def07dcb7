// Package conditions says what the conditions that change a mode's cost
// mean: the CPUs a host's processes may use and whether the overlay router
// shares them, another process burning CPU, the underlay's bandwidth,
// offloads, and TCP buffer defaults. A spec sets them for every lab
// (conditions) and sweeps them as variants, each run side by side as its
// own labs; the lab applies them, the runner pins processes.
package conditions

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Set is one set of conditions; zero fields leave the machine as it is.
type Set struct {
	// Name labels a variant (default: its conditions, e.g. "cores=1").
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Cores restricts each server host's processes to CPUs 0..Cores-1 (all
	// hosts share them, as co-located VMs would); 0: no restriction.
	Cores int `yaml:"cores,omitempty" json:"cores,omitempty"`
	// Router places a user-space overlay router: "same" CPUs as the
	// application (contention, as on Kratzke's (2015) single core) or "apart"
	// (the next Cores CPUs).
	Router string `yaml:"router,omitempty" json:"router,omitempty"`
	// CPUStress runs, on each server host, another process that burns this
	// share (0..1) of each of the host's CPUs for the whole run.
	CPUStress float64 `yaml:"cpu_stress,omitempty" json:"cpu_stress,omitempty"`
	// CPUStressOn and CPUStressOff make the stress take CPU away for part
	// of the run: on for CPUStressOn, off for CPUStressOff, over and over
	// from the lab's start (both, or neither for the whole run).
	CPUStressOn  time.Duration `yaml:"cpu_stress_on,omitempty" json:"cpu_stress_on,omitempty"`
	CPUStressOff time.Duration `yaml:"cpu_stress_off,omitempty" json:"cpu_stress_off,omitempty"`
	// Bandwidth shapes every host's underlay NIC (egress) with TBF, e.g.
	// "100mbit" (the 2017 Coherence thesis's Ethernet).
	Bandwidth string `yaml:"bandwidth,omitempty" json:"bandwidth,omitempty"`
	// Offloads turns segmentation, receive and checksum offloads ("on" or
	// "off": tso, gso, gro, tx and rx checksums) on every host's and
	// container's devices.
	Offloads string `yaml:"offloads,omitempty" json:"offloads,omitempty"`
	// TCPRmem and TCPWmem set net.ipv4.tcp_rmem / tcp_wmem ("min default
	// max") in every namespace of the lab.
	TCPRmem string `yaml:"tcp_rmem,omitempty" json:"tcp_rmem,omitempty"`
	TCPWmem string `yaml:"tcp_wmem,omitempty" json:"tcp_wmem,omitempty"`
	// TCPCongestion is the TCP congestion control of every namespace of the
	// lab (net.ipv4.tcp_congestion_control); empty means DefaultCongestion,
	// not the machine's, which varies (bbr on some machines) and whose
	// model state made lab instances of one mode differ by 20 %.
	TCPCongestion string `yaml:"tcp_congestion,omitempty" json:"tcp_congestion,omitempty"`
	// MTU sets the underlay's MTU (every host NIC and switch port);
	// OverlayMTU the overlays' devices' (default: MTU less the overlay's
	// header), Zismer's (2016) fragmentation experiments.
	MTU        int `yaml:"mtu,omitempty" json:"mtu,omitempty"`
	OverlayMTU int `yaml:"overlay_mtu,omitempty" json:"overlay_mtu,omitempty"`
	// Delay delays every link of the topology one way, each way (a
	// duration, e.g. "5ms"): each host's uplink, or each hop of a chain;
	// a spec's links that set their own delay keep it (links.go).
	Delay string `yaml:"delay,omitempty" json:"delay,omitempty"`
	// ZoneHosts puts hosts in a second zone (Kratzke's (2015) other region):
	// their names, comma-separated; the others stay in the first zone.
	// Empty with any other zone field: the topology's last host (pong in
	// ping-pong, the server in socket tests). See zones.go.
	ZoneHosts string `yaml:"zone_hosts,omitempty" json:"zone_hosts,omitempty"`
	// ZoneDelay is the one-way delay between the zones, ZoneJitter its
	// spread (uniform in ±ZoneJitter, at most ZoneDelay) and ZoneLoss the
	// share of frames lost each way, in percent.
	ZoneDelay  time.Duration `yaml:"zone_delay,omitempty" json:"zone_delay,omitempty"`
	ZoneJitter time.Duration `yaml:"zone_jitter,omitempty" json:"zone_jitter,omitempty"`
	ZoneLoss   float64       `yaml:"zone_loss,omitempty" json:"zone_loss,omitempty"`
	// ZoneVia picks what delays: "netem" or "delayline" (cnperf's
	// user-space delay line); empty: netem where the kernel has it.
	ZoneVia string `yaml:"zone_via,omitempty" json:"zone_via,omitempty"`
	// NodePlacement, on the kubernetes driver, puts the lab's hosts on
	// one node ("same-node") or each on its own ("cross-node", the
	// default there).
	NodePlacement string `yaml:"node_placement,omitempty" json:"node_placement,omitempty"`
	// Cluster, on the kubernetes driver, is the name of one of the spec's
	// kubernetes.clusters: the cluster the lab is built on. As a variant
	// it makes each mode on each cluster a series of its own, so that
	// clusters are measured side by side, their cells interleaved.
	Cluster string `yaml:"cluster,omitempty" json:"cluster,omitempty"`
	// NetworkPolicy, on the kubernetes driver, applies NetworkPolicies to
	// the lab's namespace: "none" (the baseline a sweep compares with) or
	// "allow", one policy over the lab's pods that allows the workload's
	// clients on the workload's ports. PolicyRules makes that policy N
	// ingress rules of which exactly one matches the clients, so that the
	// datapath evaluates a policy of size N (alone it means allow). A lab
	// with a policy first probes how fast a deny policy is enforced;
	// "probe" does only that (no policy, and no refusal where policies are
	// not enforced): the policy check.
	NetworkPolicy string `yaml:"network_policy,omitempty" json:"network_policy,omitempty"`
	PolicyRules   int    `yaml:"policy_rules,omitempty" json:"policy_rules,omitempty"`
	// Services, on the kubernetes driver, is how many Services (each with
	// an endpoint) the cluster holds besides the lab's own while its cells
	// run: kube-proxy's or the CNI's Service table at that size. The labs
	// of one cluster share it, so the runner measures them in ascending
	// order of it (kubernetes.md#services-at-scale).
	Services int `yaml:"services,omitempty" json:"services,omitempty"`
	// IPFamily is the lab's address family: "ipv4" (empty: every lab
	// before it), "ipv6" (addresses from RFC 5180's 2001:2::/48 only) or
	// "dual" (both on every device; workloads dial IPv6, as RFC 6724's
	// default preference does). A mode or driver that cannot carry the
	// family refuses it before any lab is built.
	IPFamily string `yaml:"ip_family,omitempty" json:"ip_family,omitempty"`
	// Impairment selects one of the spec's impairments, a named list of
	// links, for the lab (links.go): swept as variants, impaired and clean
	// labs run side by side.
	Impairment string `yaml:"impairment,omitempty" json:"impairment,omitempty"`
	// Profile "on" samples the stacks of every CPU of the machine during
	// each of the lab's cells, ProfileHz times a second (default
	// DefaultProfileHz): run/profile.
	Profile   string `yaml:"profile,omitempty" json:"profile,omitempty"`
	ProfileHz int    `yaml:"profile_hz,omitempty" json:"profile_hz,omitempty"`
	// ConntrackMax sets net.netfilter.nf_conntrack_max, the machine's
	// (every namespace's) connection tracking table size, while the lab
	// is up (conntrack.go).
	ConntrackMax int `yaml:"conntrack_max,omitempty" json:"conntrack_max,omitempty"`
}

// Bounds of profile_hz: a prime-ish rate off the kernel's 100 and 1000 Hz
// ticks by default, so samples do not fall in step with timers, and at
// most one sample a millisecond per CPU.
const (
	DefaultProfileHz           = 199
	MinProfileHz, MaxProfileHz = 49, 999
)

// Profiles reports whether the lab's cells are profiled, and at what rate.
func (s Set) Profiles() (bool, int) {
	if s.Profile != "on" {
		return false, 0
	}
	if s.ProfileHz == 0 {
		return true, DefaultProfileHz
	}
	return true, s.ProfileHz
}

// IP families (ip_family).
const (
	IPv4 = "ipv4"
	IPv6 = "ipv6"
	Dual = "dual"
)

// Family returns the set's address family, IPv4 when unset.
func (s Set) Family() string {
	if s.IPFamily == "" {
		return IPv4
	}
	return s.IPFamily
}

// HasIPv6 reports whether the lab's devices get IPv6 addresses (ipv6 or
// dual); DialsIPv6 whether workloads dial them (the same: dual dials
// IPv6); HasIPv4 whether they get IPv4 addresses (ipv4 or dual).
func (s Set) HasIPv6() bool   { return s.Family() != IPv4 }
func (s Set) DialsIPv6() bool { return s.HasIPv6() }
func (s Set) HasIPv4() bool   { return s.Family() != IPv6 }

// ClusterNameRE is the form of a name in kubernetes.clusters, which
// conditions' cluster selects: it labels series, so it is short and plain.
var ClusterNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// Network policy conditions.
const (
	PolicyNone  = "none"
	PolicyAllow = "allow"
	PolicyProbe = "probe"
	// MaxPolicyRules bounds policy_rules: beyond a thousand rules a policy
	// object nears the API server's size limit on some clusters.
	MaxPolicyRules = 1000
	// MaxServices bounds services: 20,000 Services with an endpoint each
	// are 40,000 objects in etcd, past what a test cluster's API server
	// creates in minutes.
	MaxServices = 20000
)

// Policy says whether the lab gets a NetworkPolicy and of how many ingress
// rules (at least one: the one that matches).
func (s Set) Policy() (on bool, rules int) {
	if s.NetworkPolicy == PolicyAllow || (s.NetworkPolicy == "" && s.PolicyRules > 0) {
		return true, max(1, s.PolicyRules)
	}
	return false, 0
}

// Probes reports whether the lab probes the enforcement of a deny policy:
// with a policy, or when only that is asked (probe).
func (s Set) Probes() bool {
	on, _ := s.Policy()
	return on || s.NetworkPolicy == PolicyProbe
}

// AsksPolicy reports whether the set names a network_policy condition at
// all (none included: it too is only meaningful on a cluster).
func (s Set) AsksPolicy() bool { return s.NetworkPolicy != "" || s.PolicyRules != 0 }

// Node placements on the kubernetes driver.
const (
	SameNode  = "same-node"
	CrossNode = "cross-node"
)

// Empty reports whether the set changes nothing of the lab: profiling is
// the runner's, on this machine, so every driver takes it.
func (s Set) Empty() bool { s.Name, s.Profile, s.ProfileHz = "", "", 0; return s == Set{} }

// Over returns s with v's non-zero fields on top: a variant over the
// spec's conditions. Every field is carried, so that a condition added to
// Set reaches the lab without being listed here (node_placement once did
// not). Zero is as == says: -0 is zero, NaN is set.
func (s Set) Over(v Set) Set {
	dst, src := reflect.ValueOf(&s).Elem(), reflect.ValueOf(v)
	for i := range src.NumField() {
		if f := src.Field(i); !f.Equal(reflect.Zero(f.Type())) {
			dst.Field(i).Set(f)
		}
	}
	return s
}

// Label names the set: its name, or its conditions in a fixed order.
func (s Set) Label() string {
	if s.Name != "" {
		return s.Name
	}
	var parts []string
	// A cluster is named as it is (its name has no '=' or ','), first: the
	// series of a comparison of clusters read k8s-pod/flannel.
	if s.Cluster != "" {
		parts = append(parts, s.Cluster)
	}
	add := func(k string, v any, set bool) {
		if set {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	add("cores", s.Cores, s.Cores != 0)
	add("router", s.Router, s.Router != "")
	add("stress", s.CPUStress, s.CPUStress != 0)
	add("stress_on", s.CPUStressOn, s.CPUStressOn != 0)
	add("stress_off", s.CPUStressOff, s.CPUStressOff != 0)
	add("bw", s.Bandwidth, s.Bandwidth != "")
	add("offloads", s.Offloads, s.Offloads != "")
	add("rmem", strings.ReplaceAll(s.TCPRmem, " ", ":"), s.TCPRmem != "")
	add("wmem", strings.ReplaceAll(s.TCPWmem, " ", ":"), s.TCPWmem != "")
	add("cc", s.TCPCongestion, s.TCPCongestion != "")
	add("mtu", s.MTU, s.MTU != 0)
	add("delay", s.Delay, s.Delay != "")
	add("ovmtu", s.OverlayMTU, s.OverlayMTU != 0)
	add("zone", strings.ReplaceAll(s.ZoneHosts, ",", ":"), s.ZoneHosts != "")
	add("zdelay", s.ZoneDelay, s.ZoneDelay != 0)
	add("zjitter", s.ZoneJitter, s.ZoneJitter != 0)
	add("zloss", s.ZoneLoss, s.ZoneLoss != 0)
	add("zvia", s.ZoneVia, s.ZoneVia != "")
	add("nodes", s.NodePlacement, s.NodePlacement != "")
	add("policy", s.NetworkPolicy, s.NetworkPolicy != "")
	add("rules", s.PolicyRules, s.PolicyRules != 0)
	add("svc", s.Services, s.Services != 0)
	add("ip", s.IPFamily, s.IPFamily != "")
	add("impair", s.Impairment, s.Impairment != "")
	add("profile", s.Profile, s.Profile != "")
	add("hz", s.ProfileHz, s.ProfileHz != 0)
	add("ctmax", s.ConntrackMax, s.ConntrackMax != 0)
	return strings.Join(parts, ",")
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.=,:-]{0,47}$`)

// Validate checks the set against a machine with cpus CPUs, naming the
// first bad field.
func (s Set) Validate(cpus int) error {
	if s.Name != "" && !nameRE.MatchString(s.Name) {
		return fmt.Errorf("name %q: use up to 48 letters, digits and . _ = , : -", s.Name)
	}
	switch {
	case s.Cores < 0:
		return fmt.Errorf("cores %d: must be >= 0", s.Cores)
	case s.Cores > cpus:
		return fmt.Errorf("cores %d: this machine has %d CPUs", s.Cores, cpus)
	}
	switch s.Router {
	case "", "same":
	case "apart":
		if s.Cores == 0 {
			return errors.New("router apart: needs cores, so that the router's CPUs can be the next ones")
		}
		if 2*s.Cores > cpus {
			return fmt.Errorf("router apart with cores %d: needs %d CPUs, this machine has %d", s.Cores, 2*s.Cores, cpus)
		}
	default:
		return fmt.Errorf("router %q: use same or apart", s.Router)
	}
	if !(s.CPUStress >= 0 && s.CPUStress < 1) { // NaN fails both
		return fmt.Errorf("cpu_stress %g: a share in [0, 1)", s.CPUStress)
	}
	if (s.CPUStressOn == 0) != (s.CPUStressOff == 0) || s.CPUStressOn < 0 || s.CPUStressOff < 0 {
		return fmt.Errorf("cpu_stress_on %s, cpu_stress_off %s: give both, > 0, or neither", s.CPUStressOn, s.CPUStressOff)
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"cpu_stress_on", s.CPUStressOn}, {"cpu_stress_off", s.CPUStressOff}} {
		if f.v > MaxStressPeriod {
			return fmt.Errorf("%s %s: at most %s", f.name, f.v, MaxStressPeriod)
		}
	}
	if s.CPUStressOn != 0 && s.CPUStress == 0 {
		return errors.New("cpu_stress_on: needs cpu_stress, the share to burn")
	}
	if s.Bandwidth != "" {
		if _, err := ParseRate(s.Bandwidth); err != nil {
			return fmt.Errorf("bandwidth %q: %w", s.Bandwidth, err)
		}
	}
	switch s.Offloads {
	case "", "on", "off":
	default:
		return fmt.Errorf("offloads %q: use on or off", s.Offloads)
	}
	for _, f := range []struct{ name, v string }{{"tcp_rmem", s.TCPRmem}, {"tcp_wmem", s.TCPWmem}} {
		if f.v == "" {
			continue
		}
		if _, err := parseTriple(f.v); err != nil {
			return fmt.Errorf("%s %q: %w", f.name, f.v, err)
		}
	}
	if s.TCPCongestion != "" {
		if err := checkCongestion(s.TCPCongestion, availableCongestion()); err != nil {
			return fmt.Errorf("tcp_congestion %q: %w", s.TCPCongestion, err)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"mtu", s.MTU}, {"overlay_mtu", s.OverlayMTU}} {
		if f.v != 0 && (f.v < MinMTU || f.v > MaxMTU) {
			return fmt.Errorf("%s %d: outside %d..%d (IPv4's minimum to a jumbo frame)", f.name, f.v, MinMTU, MaxMTU)
		}
	}
	switch s.NodePlacement {
	case "", SameNode, CrossNode:
	default:
		return fmt.Errorf("node_placement %q: use %s or %s", s.NodePlacement, SameNode, CrossNode)
	}
	if s.Cluster != "" && !ClusterNameRE.MatchString(s.Cluster) {
		return fmt.Errorf("cluster %q: not a cluster's name in kubernetes.clusters (1-32 of a-z, 0-9 and -)", s.Cluster)
	}
	if err := s.validatePolicy(); err != nil {
		return err
	}
	if s.Services < 0 || s.Services > MaxServices {
		return fmt.Errorf("services %d: want 0..%d", s.Services, MaxServices)
	}
	if err := s.validateConntrack(); err != nil {
		return err
	}
	switch s.IPFamily {
	case "", IPv4, IPv6, Dual:
	default:
		return fmt.Errorf("ip_family %q: use %s, %s or %s", s.IPFamily, IPv4, IPv6, Dual)
	}
	if s.Impairment != "" && !ClusterNameRE.MatchString(s.Impairment) {
		return fmt.Errorf("impairment %q: not a name in impairments (1-32 of a-z, 0-9 and -)", s.Impairment)
	}
	switch {
	case s.Profile != "" && s.Profile != "on" && s.Profile != "off":
		return fmt.Errorf("profile %q: use on or off", s.Profile)
	case s.ProfileHz != 0 && (s.ProfileHz < MinProfileHz || s.ProfileHz > MaxProfileHz):
		return fmt.Errorf("profile_hz %d: want %d..%d samples a second per CPU", s.ProfileHz, MinProfileHz, MaxProfileHz)
	}
	if s.Delay != "" {
		if d, err := time.ParseDuration(s.Delay); err != nil || d <= 0 || d > MaxLinkDelay {
			return fmt.Errorf("delay %q: want a duration in (0s, %s], one way on every link (e.g. 5ms)", s.Delay, MaxLinkDelay)
		}
	}
	return s.validateZones()
}

// validatePolicy checks network_policy and policy_rules.
func (s Set) validatePolicy() error {
	switch s.NetworkPolicy {
	case "", PolicyNone, PolicyAllow, PolicyProbe:
	default:
		return fmt.Errorf("network_policy %q: use %s, %s or %s (policy_rules N for a policy of N rules)", s.NetworkPolicy, PolicyNone, PolicyAllow, PolicyProbe)
	}
	switch {
	case s.PolicyRules < 0 || s.PolicyRules > MaxPolicyRules:
		return fmt.Errorf("policy_rules %d: want 1..%d", s.PolicyRules, MaxPolicyRules)
	case s.PolicyRules != 0 && (s.NetworkPolicy == PolicyNone || s.NetworkPolicy == PolicyProbe):
		return fmt.Errorf("policy_rules %d with network_policy %s: rules need a policy (network_policy allow, or leave it out)", s.PolicyRules, s.NetworkPolicy)
	}
	return nil
}

// DefaultCongestion is the congestion control a lab uses unless told
// otherwise: Linux's default since 2.6.19, and the one the papers' systems
// ran. A machine may default to another (bbr): the lab does not inherit it,
// so that runs on different machines compare.
const DefaultCongestion = "cubic"

// Congestion returns the congestion control the lab sets.
func (s Set) Congestion() string {
	if s.TCPCongestion == "" {
		return DefaultCongestion
	}
	return s.TCPCongestion
}

var congestionRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,15}$`)

// checkCongestion checks a congestion control's name against the kernel's
// list (nil: the list could not be read, so only the name's form).
func checkCongestion(cc string, available []string) error {
	if !congestionRE.MatchString(cc) {
		return errors.New("not a congestion control's name")
	}
	if available != nil && !slices.Contains(available, cc) {
		return fmt.Errorf("this kernel offers %s", strings.Join(available, ", "))
	}
	return nil
}

// availableCongestion reads the kernel's congestion controls (nil when it
// cannot).
func availableCongestion() []string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// HostCPUs are the CPUs a server host's processes may use (nil: any).
func (s Set) HostCPUs() []int { return span(0, s.Cores) }

// RouterCPUs are the CPUs a host's overlay router may use (nil: any).
func (s Set) RouterCPUs() []int {
	if s.Router == "apart" {
		return span(s.Cores, s.Cores)
	}
	return s.HostCPUs()
}

func span(from, n int) []int {
	var out []int
	for i := range n {
		out = append(out, from+i)
	}
	return out
}

// Bounds of a set's values.
const (
	MaxBandwidth    = 1_000_000_000_000 // bits/s (1000gbit): bandwidth
	MaxStressPeriod = 24 * time.Hour    // cpu_stress_on, cpu_stress_off
	MaxTCPMem       = math.MaxInt32     // bytes: each of tcp_rmem's and tcp_wmem's numbers (the kernel's int)
	MinMTU, MaxMTU  = 576, 9000         // mtu, overlay_mtu: IPv4's minimum to a jumbo frame
)

var rateRE = regexp.MustCompile(`^([0-9]{1,15}(?:\.[0-9]{1,9})?)([a-z]*)$`)

// ParseRate reads a rate as tc writes it: a number with an optional unit
// (bit, kbit, mbit, gbit; bps, kbps, mbps, gbps are bytes per second; any
// case), nothing around it, and returns bits per second, at most
// MaxBandwidth: the string goes to tc as it is.
func ParseRate(s string) (uint64, error) {
	m := rateRE.FindStringSubmatch(strings.ToLower(s))
	if m == nil {
		return 0, errors.New("want a positive rate such as 100mbit, nothing around it")
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v <= 0 {
		return 0, errors.New("want a positive rate such as 100mbit")
	}
	unit := m[2]
	if unit == "" {
		unit = "bit"
	}
	mult := map[string]float64{"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9,
		"bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("unit %q: use bit, kbit, mbit, gbit (or bps, kbps, mbps, gbps for bytes)", unit)
	}
	bits := v * mult
	switch {
	case bits < 8000:
		return 0, errors.New("below 8 kbit/s")
	case bits > MaxBandwidth:
		return 0, fmt.Errorf("above %dgbit", int64(MaxBandwidth/1e9))
	}
	return uint64(bits), nil
}

var digitsRE = regexp.MustCompile(`^[0-9]+$`)

func parseTriple(s string) ([3]int, error) {
	var t [3]int
	if strings.TrimSpace(s) != s {
		return t, errors.New("spaces around it: want \"min default max\" in bytes")
	}
	f := strings.Fields(s)
	if len(f) != 3 {
		return t, errors.New(`want "min default max" in bytes`)
	}
	for i, x := range f {
		v, err := strconv.Atoi(x)
		if err != nil || v <= 0 || v > MaxTCPMem || !digitsRE.MatchString(x) {
			return t, fmt.Errorf("%q: want a number of bytes in 1..%d", x, MaxTCPMem)
		}
		t[i] = v
	}
	if t[0] > t[1] || t[1] > t[2] {
		return t, errors.New("want min <= default <= max")
	}
	return t, nil
}
