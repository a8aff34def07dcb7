package kube

import (
	"context"
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/lab/kube/ciliumoff"
	"github.com/cnperf/cnperf/internal/record"
)

// describeCilium reads the cluster's cilium-config ConfigMap in
// kube-system: nil when there is none (not a Cilium cluster, or not
// readable), and the version from its label or the cilium DaemonSet.
func describeCilium(ctx context.Context, c *Conn) *record.KubeCilium {
	cm := &corev1.ConfigMap{}
	if err := c.get(ctx, c.core, "kube-system", "configmaps", "cilium-config", cm); err != nil {
		return nil
	}
	r := ciliumRecord(cm)
	if r.Version == "" {
		r.Version, r.VersionFrom = ciliumDaemonSetVersion(ctx, c)
	}
	return r
}

// ciliumRecord is what cilium-config says.
func ciliumRecord(cm *corev1.ConfigMap) *record.KubeCilium {
	d := cm.Data
	r := &record.KubeCilium{RoutingMode: d["routing-mode"], KubeProxyReplacement: d["kube-proxy-replacement"],
		SocketLB: d["bpf-lb-sock"], IPAM: d["ipam"]}
	// Before routing-mode (Cilium 1.14), the tunnel key said both.
	if r.RoutingMode == "" {
		switch t := d["tunnel"]; t {
		case "":
		case "disabled":
			r.RoutingMode = "native"
		default:
			r.RoutingMode, r.TunnelProtocol = "tunnel", t
		}
	}
	if r.RoutingMode == "tunnel" && r.TunnelProtocol == "" {
		r.TunnelProtocol = d["tunnel-protocol"]
		if r.TunnelProtocol == "" {
			r.TunnelProtocol = "vxlan" // Cilium's default
		}
	}
	r.FeaturesOff = ciliumoff.Off(d)
	// The test cluster says why (cnperf cluster up).
	if a := cm.Annotations[ciliumoff.Annotation]; a != "" {
		var why map[string]string
		if json.Unmarshal([]byte(a), &why) == nil && len(why) > 0 {
			r.FeaturesOffWhy = why
		}
	}
	if v := cm.Labels["app.kubernetes.io/version"]; v != "" {
		r.Version, r.VersionFrom = strings.TrimPrefix(v, "v"), "cilium-config label app.kubernetes.io/version"
	}
	return r
}

// ciliumDaemonSetVersion is the tag of the cilium DaemonSet's agent image
// in kube-system, as Helm installs it ("" when there is none).
func ciliumDaemonSetVersion(ctx context.Context, c *Conn) (string, string) {
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	b, err := c.core.Get().AbsPath("/apis/apps/v1/namespaces/kube-system/daemonsets/cilium").Do(cctx).Raw()
	if err != nil {
		return "", ""
	}
	var ds struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct{ Name, Image string }
				}
			}
		}
	}
	if json.Unmarshal(b, &ds) != nil {
		return "", ""
	}
	for _, ct := range ds.Spec.Template.Spec.Containers {
		if v := imageTag(ct.Image); v != "" && ct.Name == "cilium-agent" {
			return v, "cilium DaemonSet image"
		}
	}
	return "", ""
}

// imageTag is an image reference's tag without a leading v
// (quay.io/cilium/cilium:v1.20.2@sha256:... is 1.20.2), "" without one.
func imageTag(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ""
	}
	return strings.TrimPrefix(ref[i+1:], "v")
}
