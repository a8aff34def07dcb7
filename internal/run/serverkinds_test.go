package run_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/run"
	"github.com/cnperf/cnperf/internal/spec"
)

// TestServerKindsAreTheDrivers: whether pingpong.servers must be commands
// or images is each driver's to say (lab.Capabilities), not a
// name in the spec; what a driver of the run cannot start is refused in
// the spec's words before anything is built.
func TestServerKindsAreTheDrivers(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"pingpong: {servers: {pong_image: pp:go}}", "pingpong.servers: the netns driver runs commands: give ping and pong as argv for the roles with an image"},
		{"driver: docker\npingpong: {servers: {pong: [x]}}", "pingpong.servers: the docker driver runs images: give ping_image and pong_image for the roles with a command"},
		{"driver: kubernetes\npingpong: {servers: {pong_image: pp:go}}", "pingpong.servers: driver kubernetes runs cnperf's servers only (netns and docker run others)"},
		{"driver: docker\npingpong: {servers: {pong_image: pp:go}}", ""},
	} {
		mode := "bare"
		if strings.Contains(tc.doc, "kubernetes") {
			mode = "k8s-pod"
		}
		s, err := spec.Parse(strings.NewReader("name: x\nmodes: ["+mode+"]\nreference: "+mode+"\n"+tc.doc+"\n"), "t")
		if err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		_, err = run.NewPlan(run.Options{Spec: s, Lab: drivers.Catalog()})
		if tc.want == "" && err != nil && strings.Contains(err.Error(), "pingpong.servers") || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%.60s: Check = %v, want %q", tc.doc, err, tc.want)
		}
	}
}
