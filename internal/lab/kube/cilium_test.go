package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/lab/kube/ciliumoff"
	"github.com/cnperf/cnperf/internal/record"
)

func TestCiliumRecord(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels map[string]string
		annot  map[string]string
		data   map[string]string
		want   record.KubeCilium
	}{
		{"test cluster vxlan", map[string]string{"app.kubernetes.io/version": "1.20.2"}, map[string]string{ciliumoff.Annotation: `{"enable-ipv6":"IPv4 only"}`},
			map[string]string{"routing-mode": "tunnel", "tunnel-protocol": "vxlan", "kube-proxy-replacement": "false", "bpf-lb-sock": "false",
				"ipam": "kubernetes", "enable-ipv6": "false", "enable-hubble": "False", "enable-l7-proxy": "true", "unknown-key": "false"},
			record.KubeCilium{Version: "1.20.2", VersionFrom: "cilium-config label app.kubernetes.io/version", RoutingMode: "tunnel", TunnelProtocol: "vxlan",
				KubeProxyReplacement: "false", SocketLB: "false", IPAM: "kubernetes", FeaturesOff: []string{"bpf-lb-sock", "enable-hubble", "enable-ipv6"},
				FeaturesOffWhy: map[string]string{"enable-ipv6": "IPv4 only"}}},
		{"native, KPR", nil, nil, map[string]string{"routing-mode": "native", "tunnel-protocol": "vxlan", "kube-proxy-replacement": "true"},
			record.KubeCilium{RoutingMode: "native", KubeProxyReplacement: "true"}},
		{"tunnel without protocol is vxlan", nil, map[string]string{ciliumoff.Annotation: "not json"}, map[string]string{"routing-mode": "tunnel"},
			record.KubeCilium{RoutingMode: "tunnel", TunnelProtocol: "vxlan"}},
		{"before routing-mode: tunnel geneve", nil, nil, map[string]string{"tunnel": "geneve"},
			record.KubeCilium{RoutingMode: "tunnel", TunnelProtocol: "geneve"}},
		{"before routing-mode: tunnel disabled", nil, nil, map[string]string{"tunnel": "disabled"},
			record.KubeCilium{RoutingMode: "native"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: c.labels, Annotations: c.annot}, Data: c.data}
			if got := ciliumRecord(cm); !reflect.DeepEqual(*got, c.want) {
				t.Errorf("got %+v\nwant %+v", *got, c.want)
			}
		})
	}
}

func TestImageTag(t *testing.T) {
	for in, want := range map[string]string{
		"quay.io/cilium/cilium:v1.20.2@sha256:abc": "1.20.2",
		"quay.io/cilium/cilium:v1.16.0":            "1.16.0",
		"localhost:5000/cilium/cilium":             "",
		"cilium":                                   "",
		"":                                         "",
	} {
		if got := imageTag(in); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzImageTag(f *testing.F) {
	f.Add("quay.io/cilium/cilium:v1.20.2@sha256:abc")
	f.Fuzz(func(t *testing.T, s string) { _ = imageTag(s) })
}

// FuzzCiliumRecord: whatever a cluster's cilium-config holds, the record
// is made without a panic and names no feature off that is not false.
func FuzzCiliumRecord(f *testing.F) {
	f.Add("tunnel", "vxlan", "", `{"enable-ipv6":"x"}`, "false")
	f.Add("", "", "disabled", "{", "FALSE ")
	f.Fuzz(func(t *testing.T, routing, proto, tunnel, why, v string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ciliumoff.Annotation: why}},
			Data: map[string]string{"routing-mode": routing, "tunnel-protocol": proto, "tunnel": tunnel, "enable-hubble": v}}
		r := ciliumRecord(cm)
		if len(r.FeaturesOff) > 1 {
			t.Errorf("features off %v from one key", r.FeaturesOff)
		}
	})
}
