package report

import (
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestPolicyTable: a run whose labs held policies shows each lab's policy
// and probe times, says which were not enforced, and a run without the
// condition shows nothing.
func TestPolicyTable(t *testing.T) {
	lab := func(k *record.Kube, c conditions.Set) record.ModeMeta {
		return record.ModeMeta{Conditions: c, Lab: &record.Lab{Kube: k, Conditions: c}}
	}
	probe := &record.PolicyProbe{Enforced: true, Deny: 12300 * time.Microsecond, Undeny: 45600 * time.Microsecond, Apply: 78900 * time.Microsecond, Every: 10 * time.Millisecond, Bound: 30 * time.Second}
	m := record.Meta{Modes: []record.ModeMeta{
		lab(&record.Kube{}, conditions.Set{NetworkPolicy: "none"}),
		lab(&record.Kube{Policy: "allow", PolicyRules: 1, PolicyProbe: probe}, conditions.Set{NetworkPolicy: "allow"}),
		lab(&record.Kube{Policy: "allow", PolicyRules: 100, PolicyProbe: probe}, conditions.Set{PolicyRules: 100}),
		lab(&record.Kube{PolicyProbe: &record.PolicyProbe{Bound: 30 * time.Second, Note: "passing"}}, conditions.Set{NetworkPolicy: "probe"}),
		lab(&record.Kube{}, conditions.Set{}),
	}}
	names := []string{"k8s-pod/none", "k8s-pod/allow", "k8s-pod/r100", "k8s-pod/probe", "k8s-pod"}
	for i := range m.Modes {
		m.Modes[i].Mode = names[i]
	}
	var sb strings.Builder
	if err := WritePolicyTable(&sb, m); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"k8s-pod/none   none", "allow, 1 rule", "allow, 100 rules  yes              12.3            45.6         78.9",
		"probe only", "not enforced: the cluster's pod network let a deny-all policy pass (k8s-pod/probe)"} {
		if !strings.Contains(out, want) {
			t.Errorf("policy table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nk8s-pod ") {
		t.Errorf("a lab without the condition is listed:\n%s", out)
	}
	sb.Reset()
	if err := WritePolicyTable(&sb, record.Meta{Modes: []record.ModeMeta{lab(&record.Kube{}, conditions.Set{})}}); err != nil || sb.Len() != 0 {
		t.Errorf("a run without the condition: %q, %v; want nothing", sb.String(), err)
	}
}
