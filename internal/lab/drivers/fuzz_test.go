package drivers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/presets"
)

// FuzzDriverSections: the drivers' own sections (engines:, kubernetes:),
// kept raw by the spec, are decoded and checked by each driver from
// whatever a spec file holds, and a refusal is one line, never a panic.
func FuzzDriverSections(f *testing.F) {
	for _, n := range presets.Names() {
		if b, err := presets.Read(n); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: x\ndriver: docker\nengines: [{host: tcp://198.18.0.1:2376, tls: {ca: a, cert: b, key: c}}]\n"))
	f.Add([]byte("name: x\ndriver: kubernetes\nkubernetes: {clusters: [{name: a, kubeconfig: k}, {name: a}], nodes: [x, x]}\n"))
	f.Add([]byte("name: x\nkubernetes: {clusters: [{name: a, server: 1}]}\nconditions: {cluster: b}\n"))
	f.Add([]byte("name: x\nengines: {tls: [1, 2]}\n"))
	f.Add([]byte("name: x\ndriver: kubernetes\nkubernetes: {policy_probe_seconds: -1e309}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := spec.Parse(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		if err := Catalog().CheckSpec(s); err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("a refusal of more than one line: %q", err)
		}
	})
}
