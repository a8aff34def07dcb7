// Package ciliumoff is what cnperf's test cluster (internal/testcluster) and
// its kubernetes driver (internal/lab/kube) share of the Cilium features a
// cluster turns off: cilium-config's keys that switch one, and the
// annotation on cilium-config in which the test cluster says why each is
// off, which the driver records with the run.
package ciliumoff

import (
	"slices"
	"strings"
)

// Annotation is the test cluster's annotation on cilium-config: a JSON
// object, feature key to why it is off.
const Annotation = "cnperf.io/cilium-off-why"

// Features are cilium-config's keys that switch a feature, sorted.
var Features = []string{"bpf-lb-sock", "enable-bandwidth-manager", "enable-bgp-control-plane", "enable-bpf-masquerade",
	"enable-endpoint-health-checking", "enable-envoy-config", "enable-gateway-api", "enable-health-checking",
	"enable-host-firewall", "enable-hubble", "enable-ingress-controller", "enable-ipsec", "enable-ipv4",
	"enable-ipv4-masquerade", "enable-ipv6", "enable-l7-proxy", "enable-local-redirect-policy", "enable-wireguard"}

// Off are the Features a cilium-config's data sets to false, sorted.
func Off(data map[string]string) []string {
	var off []string
	for _, k := range Features {
		if strings.EqualFold(strings.TrimSpace(data[k]), "false") {
			off = append(off, k)
		}
	}
	slices.Sort(off)
	return off
}
