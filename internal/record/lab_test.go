package record

import (
	"slices"
	"testing"
)

// TestDriverParts: a lab's and an endpoint's words for people come from
// the driver's part of the record they carry, none from a driver's name.
func TestDriverParts(t *testing.T) {
	docker := Endpoint{Docker: &DockerEndpoint{DockerHost: "unix:///d.sock", Version: "27.1", Sandbox: "0123456789abcdef"}}
	pod := Endpoint{Kube: &KubePod{Namespace: "cnperf-x", Pod: "server1", Node: "n1", PodIP: "10.0.0.2"}}
	for _, c := range []struct {
		ep    Endpoint
		where []string
		lab   Lab
		built string
	}{
		{Endpoint{}, nil, Lab{}, "built by hand in network namespaces (d)"},
		{docker, []string{"docker -H unix:///d.sock (engine 27.1), sandbox 0123456789ab"}, Lab{Endpoints: []Endpoint{docker}}, "on real Docker Engines (d)"},
		{pod, []string{"kubectl -n cnperf-x exec server1 -- /cnperf ... (node n1, pod IP 10.0.0.2)"}, Lab{Kube: &Kube{}, Endpoints: []Endpoint{pod}}, "on d"},
	} {
		if got := c.ep.Where(); !slices.Equal(got, c.where) {
			t.Errorf("Where = %q, want %q", got, c.where)
		}
		if got := c.lab.Built("d"); got != c.built {
			t.Errorf("Built = %q, want %q", got, c.built)
		}
	}
}
