package conditions

import (
	"fmt"
	"strings"
	"time"
)

// Field is one condition as the docs list it: the spec's field, the
// values it takes (with the bounds Validate checks, from the constants
// above) and what it does. Fields holds every field of Set but Name once,
// in Set's order (TestFieldsDeclareEverySetField): docs/conditions.md's
// table is rendered from it (internal/docgen), so a condition added here
// is documented here.
type Field struct {
	Name, Values, Meaning string
}

// Fields are the conditions, in Set's order.
var Fields = []Field{
	{"cores", "0..the machine's CPUs",
		"pin every server host's processes (servers, socket clients, routers, stress) to CPUs 0..N−1 at fork; all hosts share them, as co-located VMs would; siege is not pinned"},
	{"router", "`same`, `apart`",
		"a user-space overlay router on the application's CPUs (`same`: contention, as on Kratzke 2015's single core) or on the next `cores` CPUs (`apart`, needs twice `cores`)"},
	{"cpu_stress", "[0, 1)", "another process on each server host burns this share of each of the host's CPUs (Zismer 2016's stress-ng)"},
	{"cpu_stress_on", "(0s, " + ShortDuration(MaxStressPeriod) + "]", "with `cpu_stress_off`: burn only for the on part of each on+off window from the lab's start"},
	{"cpu_stress_off", "(0s, " + ShortDuration(MaxStressPeriod) + "]", "the off part of that window; both or neither"},
	{"bandwidth", fmt.Sprintf("8kbit..%dgbit", MaxBandwidth/1_000_000_000),
		"a TBF qdisc on every host's NIC (egress), burst 128 kB, at most 50 ms queued; a number and a tc unit (`bit`, `kbit`, `mbit`, `gbit`; `bps`, `kbps`, `mbps`, `gbps` are bytes), e.g. `100mbit`"},
	{"offloads", "`on`, `off`", "`ethtool -K DEV tso gso gro tx rx` on every device of every host and container namespace (Zismer 2016)"},
	{"tcp_rmem", fmt.Sprintf(`"min default max", min ≤ default ≤ max, each 1..%d`, MaxTCPMem), "`net.ipv4.tcp_rmem` in every namespace of the lab (Kratzke & Quint 2015's receive-window breakpoints)"},
	{"tcp_wmem", fmt.Sprintf(`"min default max", min ≤ default ≤ max, each 1..%d`, MaxTCPMem), "`net.ipv4.tcp_wmem` in every namespace of the lab"},
	{"tcp_congestion", "a control the kernel offers", "the TCP congestion control of every connection in the lab; default `" + DefaultCongestion + "`, whatever the machine's ([why](#the-congestion-control))"},
	{"mtu", fmt.Sprintf("%d..%d", MinMTU, MaxMTU), "the underlay's MTU: every host NIC and switch port"},
	{"overlay_mtu", fmt.Sprintf("%d..%d", MinMTU, MaxMTU),
		"the overlays' devices' MTU (default: the underlay's less the overlay's header: VXLAN 50, 70 over IPv6, the UDP router 28, WireGuard 80); `flannel-udp` and `flannel-host-gw` refuse it"},
	{"delay", "(0s, " + ShortDuration(MaxLinkDelay) + "]", "delay every link one way, each way: each host's uplink, each hop of a chain (a round trip across a switch crosses two uplinks each way); a spec's `links` that set their own delay keep it"},
	{"zone_hosts", "host names, comma-separated", "the hosts in a second zone; default the topology's last host (pong, or the server of socket tests). Any `zone_*` field splits the lab, even at zero delay ([zones](#zones-and-regions))"},
	{"zone_delay", "0.." + ShortDuration(MaxZoneDelay), "one-way delay between the zones, each way"},
	{"zone_jitter", "0..`zone_delay`", "uniform in ±jitter; the delay line keeps frames in order, netem may reorder"},
	{"zone_loss", "[0, 100)", "percent of frames lost between the zones, each way"},
	{"zone_via", "`" + ViaNetem + "`, `" + ViaDelayline + "`", "what delays; default netem where the kernel has it, else cnperf's delay line"},
	{"node_placement", "`" + SameNode + "`, `" + CrossNode + "`", "kubernetes driver: every pod of the lab on one node, or each host on its own (the default)"},
	{"cluster", "a name in `kubernetes.clusters`", "kubernetes driver: the cluster the lab is built on ([several clusters](kubernetes.md#several-clusters-in-one-run))"},
	{"network_policy", "`" + PolicyNone + "`, `" + PolicyAllow + "`, `" + PolicyProbe + "`",
		"kubernetes driver: a NetworkPolicy over the lab's pods allowing its clients (`allow`), none (the baseline), or only the enforcement probe ([policy cost](kubernetes.md#network-policy-cost))"},
	{"policy_rules", fmt.Sprintf("1..%d", MaxPolicyRules), "that policy as N ingress rules of which one matches; alone it means `allow`"},
	{"services", fmt.Sprintf("0..%d", MaxServices), "kubernetes driver: N Services with an endpoint on the lab's cluster while it is measured, and their programming latency ([Services at scale](kubernetes.md#services-at-scale))"},
	{"ip_family", "`" + IPv4 + "`, `" + IPv6 + "`, `" + Dual + "`", "the lab's address family: IPv4 (default), IPv6 only from 2001:2::/48, or both, workloads dialling IPv6 ([IPv6](labs.md#ipv6))"},
	{"impairment", "a name in `impairments`", "the spec's list of impaired links for this lab, over `links` ([links](#impaired-links-and-flaps))"},
	{"profile", "`on`, `off`", "sample every CPU's kernel and user stacks during each cell, stored per cell (`cnperf run --profile` sets it; [stacks](results.md#stacks-per-cell))"},
	{"profile_hz", fmt.Sprintf("%d..%d", MinProfileHz, MaxProfileHz), fmt.Sprintf("samples a second per CPU with `profile: on` (default %d)", DefaultProfileHz)},
	{"conntrack_max", fmt.Sprintf("%d..%d", MinConntrackMax, MaxConntrackMax), "netns driver: `net.netfilter.nf_conntrack_max` while the lab is up, the machine's own value put back at `lab down` and `clean`; a kernel-wide limit on each namespace's table, other labs' and containers' too, so one value per run, not a variant ([connection state](workloads.md#connection-state))"},
}

// ShortDuration is a duration as a spec writes it: 24h, 10s, 1h30m.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
