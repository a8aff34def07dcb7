package report_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/gate"
)

// editedRun copies the stored run testdata/written-2026-11/NAME with its
// run.json changed by edit, as a run of another spec or cluster would have
// written it.
func editedRun(t *testing.T, name string, edit func(meta map[string]any)) string {
	t.Helper()
	src := filepath.Join("testdata", "written-2026-11", name)
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	samples, err := os.ReadFile(filepath.Join(src, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	edit(meta)
	if b, err = json.Marshal(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples.jsonl"), samples, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// perVariantRun is the stored Kubernetes ping-pong run (k8s-host and
// k8s-pod, same node and across nodes) with its spec changed by edit.
func perVariantRun(t *testing.T, edit func(spec map[string]any)) string {
	return editedRun(t, "k8s-pingpong", func(m map[string]any) { edit(m["spec"].(map[string]any)) })
}

// TestNamedReference: a run whose series each have their own reference
// (two clusters, or reference_per) compares k8s-pod/cross-node with
// k8s-host/cross-node by default, and a reference the reader names, even
// the spec's own first one, is every series' in summary, report and
// export alike; check judges as the default tables show. Before, a named
// reference equal to the spec's own was taken as the default and silently
// ignored.
func TestNamedReference(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(spec map[string]any)
		label string
	}{
		{"two clusters", func(s map[string]any) {
			s["kubernetes"] = map[string]any{"image": "cnperf.local/cnperf:k8s", "image_pull_policy": "Never", "clusters": []any{
				map[string]any{"name": "a", "kubeconfig": "/a"}, map[string]any{"name": "b", "kubeconfig": "/b"}}}
			s["variants"] = []any{
				map[string]any{"name": "same-node", "cluster": "a", "node_placement": "same-node"},
				map[string]any{"name": "cross-node", "cluster": "b", "node_placement": "cross-node"}}
		}, "k8s-host on each series' own cluster and conditions"},
		{"reference_per", func(s map[string]any) { s["reference_per"] = []string{"node_placement"} }, "k8s-host on each series' own node placement"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := perVariantRun(t, c.edit)
			const first, cross, pod = "k8s-host/same-node", "k8s-host/cross-node", "k8s-pod/cross-node"
			for _, ref := range []struct{ asked, want string }{{"", cross}, {first, first}, {cross, cross}} {
				want := c.label
				if ref.asked != "" {
					want = ref.asked
				}
				// summary
				run, err := report.ReadRun(dir, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				var sum bytes.Buffer
				if err := report.Summary(&sum, run, ref.asked, false); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(sum.String(), "intervals against "+want+" (") {
					t.Errorf("--reference %q: summary's intervals not against %q:\n%s", ref.asked, want, sum.String())
				}
				// report
				runs, notes := report.Load([]string{dir})
				o := report.DefaultOptions()
				o.Reference = ref.asked
				r, err := report.Build(runs, notes, o)
				if err != nil {
					t.Fatal(err)
				}
				reportRatio := math.NaN()
				for _, iv := range r.Data.Intervals {
					if iv.Series == pod && iv.Metric == "transfer" {
						reportRatio = float64(iv.Ratio)
					}
				}
				// export
				exportRatio, exportRef := math.NaN(), ""
				for _, res := range report.Feed(runs[0], ref.asked).Results {
					if res.Labels["series"] != pod || res.Labels["instance"] != "all" {
						continue
					}
					for _, f := range res.Figures {
						if f.Key == "transfer" {
							exportRatio, exportRef = f.Ratio, f.Reference
						}
					}
				}
				if exportRef != ref.want {
					t.Errorf("--reference %q: export compares %s with %q, want %q", ref.asked, pod, exportRef, ref.want)
				}
				if math.IsNaN(reportRatio) || reportRatio != exportRatio {
					t.Errorf("--reference %q: %s transfer ratio %v in the report, %v in the export", ref.asked, pod, reportRatio, exportRatio)
				}
				if ref.asked != "" {
					continue
				}
				// check: the spec's reference, as the default tables
				checked, err := gate.Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				if checked.Reference != c.label {
					t.Errorf("check names the reference %q, want %q", checked.Reference, c.label)
				}
				for _, ci := range checked.CIs {
					if ci.Mode == pod && ci.Metric.Key == "transfer" && ci.Ratio != reportRatio {
						t.Errorf("check judges %s transfer at %v, the report shows %v", pod, ci.Ratio, reportRatio)
					}
				}
				l, err := gate.ParseLimit(cross + ":transfer=10")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := gate.JudgeLimits(checked, []gate.Limit{l}); err == nil || !strings.Contains(err.Error(), "is the reference") {
					t.Errorf("a limit on %s, its placement's reference: %v, want refused as the reference", cross, err)
				}
			}
		})
	}
}
