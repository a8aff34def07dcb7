package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// PolicyRow is one lab's NetworkPolicy condition and what its enforcement
// probe found: the policy-cost curve is the series themselves (one per
// policy size); this says what each lab held and how fast the cluster
// enforced a deny policy on it.
type PolicyRow struct {
	Series   string
	Instance int
	Policy   string // "none", "allow, 1 rule", "allow, 100 rules", "probe only"
	Enforced string // "yes", "not enforced", or why the lab was not probed
	Deny     time.Duration
	Undeny   time.Duration
	Apply    time.Duration // the lab's own policy, until in force (0: not measured)
	Every    time.Duration
}

// PolicyRows lists, per lab of a run that recorded a NetworkPolicy or an
// enforcement probe, the policy and the probe's times; none for a run
// without the condition.
func PolicyRows(m record.Meta) []PolicyRow {
	var rows []PolicyRow
	for _, mm := range m.Modes {
		if mm.Lab == nil || mm.Lab.Kube == nil {
			continue
		}
		k := mm.Lab.Kube
		cond := mm.Conditions
		if !cond.AsksPolicy() {
			cond = mm.Lab.Conditions
		}
		if k.Policy == "" && k.PolicyProbe == nil && !cond.AsksPolicy() {
			continue
		}
		row := PolicyRow{Series: mm.Mode, Instance: mm.Instance, Policy: "none"}
		switch {
		case k.Policy != "" && k.PolicyRules == 1:
			row.Policy = k.Policy + ", 1 rule"
		case k.Policy != "":
			row.Policy = fmt.Sprintf("%s, %d rules", k.Policy, k.PolicyRules)
		case k.PolicyProbe != nil:
			row.Policy = "probe only"
		}
		if p := k.PolicyProbe; p != nil {
			switch {
			case p.Enforced:
				row.Enforced, row.Deny, row.Undeny, row.Apply, row.Every = "yes", p.Deny, p.Undeny, p.Apply, p.Every
			case p.Note != "" && p.Bound == 0:
				row.Enforced = p.Note
			default:
				row.Enforced = "not enforced"
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// policyCaption says what the policy table's times are.
const policyCaption = "Per lab: the NetworkPolicy its namespace held while measured (N ingress rules, one of them matching the clients; the policy-cost curve is these series side by side), and what probing its pods found before: a client pod dialled a server pod's port every few milliseconds while a deny-all-ingress policy was created (deny: from the create request until the first dial that failed) and deleted (allow again: from the delete request until a dial passed again); then the lab's own policy was created (in force: from the create request until a port it does not allow was refused; the cells ran after). Not enforced: the dial still passed after the probe's bound."

func ms(d time.Duration, enforced bool) string {
	if !enforced {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

// addPolicy adds the policy table when a run's labs held NetworkPolicies
// or probed their enforcement.
func (r *Report) addPolicy() {
	t := Table{ID: "tab-policy", Title: "Network policy", Caption: policyCaption,
		Columns: []string{"series", "policy", "enforced", "deny (ms)", "allow again (ms)", "lab's policy in force (ms)", "probe every (ms)"}}
	for _, run := range r.Runs {
		for _, p := range PolicyRows(run.Meta) {
			t.Rows = append(t.Rows, []Cell{{Text: seriesName(r.Runs, run, p.Series) + instanceSuffix(p.Instance)}, {Text: p.Policy}, {Text: p.Enforced},
				{Text: ms(p.Deny, p.Enforced == "yes")}, {Text: ms(p.Undeny, p.Enforced == "yes")}, {Text: ms(p.Apply, p.Apply > 0)}, {Text: ms(p.Every, p.Enforced == "yes")}})
		}
	}
	if len(t.Rows) > 0 {
		r.Tables = append(r.Tables, t)
	}
}

func instanceSuffix(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf(" #%d", i)
}

// WritePolicyTable writes the policy table of a run (nothing for a run
// without the condition), and one line naming the labs whose cluster did
// not enforce policies.
func WritePolicyTable(w io.Writer, m record.Meta) error {
	rows := PolicyRows(m)
	if len(rows) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString("\nnetwork policy: per lab, its policy and the enforcement probe (deny: create to first blocked dial; allow again: delete to first passing dial; in force: the lab's policy created to a port it does not allow refused)\n")
	table := [][]string{{"series", "policy", "enforced", "deny ms", "allow again ms", "in force ms"}}
	var not []string
	for _, p := range rows {
		table = append(table, []string{p.Series + instanceSuffix(p.Instance), p.Policy, p.Enforced, ms(p.Deny, p.Enforced == "yes"), ms(p.Undeny, p.Enforced == "yes"), ms(p.Apply, p.Apply > 0)})
		if p.Enforced == "not enforced" {
			not = append(not, p.Series+instanceSuffix(p.Instance))
		}
	}
	writeAligned(&sb, table, 3)
	if len(not) > 0 {
		fmt.Fprintf(&sb, "not enforced: the cluster's pod network let a deny-all policy pass (%s): a policy's cost there measures nothing\n", strings.Join(not, ", "))
	}
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return fmt.Errorf("write policy table: %w", err)
	}
	return nil
}
