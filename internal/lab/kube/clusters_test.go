package kube

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// fakeAPI is an API server that answers what a preflight asks: the
// version, access reviews (all allowed), two Ready nodes, and kube-system
// with uid; namespaces made are counted, so that a test sees none was.
func fakeAPI(t *testing.T, uid string, made *int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/version":
			fmt.Fprint(w, `{"major":"1","minor":"34","gitVersion":"v1.34.4"}`)
		case r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
			fmt.Fprint(w, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","status":{"allowed":true}}`)
		case r.URL.Path == "/api/v1/nodes":
			ready := `"status":{"conditions":[{"type":"Ready","status":"True"}]}`
			fmt.Fprintf(w, `{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"node1"},%s},{"metadata":{"name":"node2"},%s}]}`, ready, ready)
		case r.URL.Path == "/api/v1/namespaces/kube-system":
			json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "kube-system", "uid": uid}})
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces":
			*made++
			http.Error(w, "not in this test", http.StatusForbidden)
		default:
			http.Error(w, "not in this test: "+r.URL.Path, http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// kubeconfig writes a kubeconfig whose contexts name servers.
func kubeconfig(t *testing.T, servers map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for name, url := range servers {
		fmt.Fprintf(&b, "- name: %s\n  cluster: {server: %q}\n", name, url)
	}
	b.WriteString("users:\n- name: u\n  user: {token: t}\ncontexts:\n")
	first := ""
	for name := range servers {
		fmt.Fprintf(&b, "- name: %s\n  context: {cluster: %s, user: u}\n", name, name)
		first = name
	}
	fmt.Fprintf(&b, "current-context: %s\n", first)
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPreflightClusters: every cluster of a spec's kubernetes.clusters is
// asked before anything is made; each refusal names the cluster as the
// user listed it, in one line, and nothing is made on any cluster.
func TestPreflightClusters(t *testing.T) {
	made := 0
	a, b, c := fakeAPI(t, "uid-a", &made), fakeAPI(t, "uid-b", &made), fakeAPI(t, "uid-a", &made)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // a port nothing answers on
	kc := kubeconfig(t, map[string]string{"a": a.URL, "b": b.URL, "c": c.URL, "gone": closed.URL})
	both := map[string][]string{"one": {conditions.CrossNode}, "two": {conditions.SameNode}, "three": {conditions.CrossNode}}
	for _, tc := range []struct {
		name     string
		clusters []TargetCluster
		want     string
	}{
		{"two clusters", []TargetCluster{{Name: "one", Kubeconfig: kc, Context: "a"}, {Name: "two", Kubeconfig: kc, Context: "b"}}, ""},
		{"not reachable", []TargetCluster{{Name: "one", Kubeconfig: kc, Context: "a"}, {Name: "flannel", Kubeconfig: kc, Context: "gone"}},
			"kubernetes.clusters[1] (flannel): not reachable: cluster at " + closed.URL + " does not answer"},
		{"no such context", []TargetCluster{{Name: "one", Kubeconfig: kc, Context: "zz"}},
			`kubernetes.clusters[0] (one): context "zz": not in ` + kc + " (it has a, b, c, gone)"},
		{"no such kubeconfig", []TargetCluster{{Name: "one", Kubeconfig: "/nonexistent/kc"}},
			"kubernetes.clusters[0] (one): not reachable: kubeconfig /nonexistent/kc"},
		{"one cluster twice", []TargetCluster{{Name: "one", Kubeconfig: kc, Context: "a"}, {Name: "two", Kubeconfig: kc, Context: "b"}, {Name: "three", Kubeconfig: kc, Context: "c"}},
			"kubernetes.clusters[2] (three): the same cluster as kubernetes.clusters[0] (one) (kube-system's UID uid-a in both)"},
		{"test clusters not up", []TargetCluster{{Name: "one", Kubeconfig: kc, Context: "a"},
			{Name: "two", TestCluster: "mcabsent1", CNI: "bridge", Kubeconfig: testClusterKubeconfig("mcabsent1")},
			{Name: "three", TestCluster: "mcabsent2", CNI: "flannel-vxlan", Kubeconfig: testClusterKubeconfig("mcabsent2")}},
			"kubernetes.clusters: 2 test clusters not up; bring them up with: cnperf cluster up mcabsent1 --nodes 1 --cni bridge && cnperf cluster up mcabsent2 --nodes 2 --cni flannel-vxlan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := PreflightClusters(Target{Clusters: tc.clusters}, both)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("not one line: %q", err)
			}
		})
	}
	if made != 0 {
		t.Errorf("preflight made %d namespaces", made)
	}
}

// TestTargetOn: a lab's target is the cluster its conditions select, the
// only one listed when they select none, and the spec's own without any.
func TestTargetOn(t *testing.T) {
	all := Target{Image: "i", Clusters: []TargetCluster{{Name: "a", Kubeconfig: "/a", Context: "ca"}, {Name: "b", TestCluster: "mc2", Kubeconfig: testClusterKubeconfig("mc2")}}}
	on, err := all.On("b")
	if err != nil || on.Kubeconfig != "/run/cnperf/state/mc2/cluster/kubeconfig" || on.Context != "" || on.Image != "i" || on.clusterName() != "b" {
		t.Errorf("On(b) = %+v, %v", on, err)
	}
	if _, err := all.On(""); err == nil {
		t.Error("no cluster selected of two: accepted")
	}
	if _, err := all.On("c"); err == nil {
		t.Error("a cluster not listed: accepted")
	}
	one := Target{Clusters: all.Clusters[:1]}
	if on, err := one.On(""); err != nil || on.Context != "ca" {
		t.Errorf("the only cluster: %+v, %v", on, err)
	}
	plain := Target{Kubeconfig: "/k"}
	if on, err := plain.On(""); err != nil || on.Kubeconfig != "/k" || on.clusterName() != "" {
		t.Errorf("no clusters: %+v, %v", on, err)
	}
}
