package report

import (
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/analysis"
)

// variantRefs is, for a run that compares clusters or keeps each series'
// reference in its variant (reference_per) and the reference its spec
// names, each series' own reference: the reference mode on the series'
// cluster and conditions (k8s-pod/flannel against k8s-host/flannel), or on
// its reference_per conditions (k8s-pod/cross-node against
// k8s-host/cross-node; spec.VariantReferences). Nil for any other run, or
// a reference the reader named (--reference, run.named), which is every
// series' even when it is the spec's own.
func variantRefs(run Run, ref string) map[string]string {
	s := run.Meta.Spec
	if run.named || ref != s.ReferenceKey() {
		return nil
	}
	return s.VariantReferences()
}

// named marks each run's reference as the reader's (ref given): every
// series is compared with it (variantRefs). The runs are copied.
func named(runs []Run, ref string) []Run {
	if ref == "" {
		return runs
	}
	out := slices.Clone(runs)
	for i := range out {
		out[i].named = true
	}
	return out
}

// refOf is how run's series are compared with ref (variantRefs).
func refOf(run Run, ref string) analysis.RefOf {
	if refs := variantRefs(run, ref); refs != nil {
		return analysis.Within(refs)
	}
	return analysis.One(ref)
}

// perVariant joins the reference mode's name and what each series shares
// with its own reference (spec.ReferenceScope): "k8s-host on each series'
// own cluster and conditions".
const perVariant = " on each series' own "

// possessive is the reference's name in the possessive: "k8s-host's",
// or, per variant, "that k8s-host's".
func (iv intervals) possessive() string {
	if mode, _, ok := strings.Cut(iv.ref, perVariant); ok {
		return "that " + mode + "'s"
	}
	return iv.ref + "'s"
}

// refLabel names the reference in the tables' words: ref, or each
// variant's own reference mode.
func refLabel(run Run, ref string) string {
	if variantRefs(run, ref) != nil {
		return run.Meta.Spec.Reference + perVariant + run.Meta.Spec.ReferenceScope()
	}
	return ref
}

// refShort is refLabel for a column's head: "k8s-host/own" for each
// series' own.
func refShort(run Run, ref string) string {
	if variantRefs(run, ref) != nil {
		return run.Meta.Spec.Reference + "/own"
	}
	return ref
}

// RunIntervals returns one run's ratios to its reference mode ref with
// their 95 % intervals (analysis.Spread): per mode and ping-pong metric,
// or per case, mode and metric; each series against its own reference
// where the run gives each one (variantRefs). Nil when
// ref is not among the run's series. Series are the run's own mode keys.
func RunIntervals(run Run, ref string, same float64) []analysis.RatioCI {
	return analysis.IntervalsWithin(RunCases(run, ref, same), refOf(run, ref))
}

// RunReference is how `cnperf check` names and finds run's reference,
// the spec's own: its name in the tables' words (refLabel) and the
// series that are a reference, one or one per place (variantRefs).
func RunReference(run Run) (label string, refs []string) {
	ref := run.Meta.Spec.ReferenceKey()
	for _, r := range variantRefs(run, ref) {
		if !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	if refs == nil {
		refs = []string{ref}
	}
	slices.Sort(refs)
	return refLabel(run, ref), refs
}

// refText names the report's reference in its captions: r.Reference, or,
// for one run comparing clusters, each series' own (refLabel).
func (r *Report) refText() string {
	if len(r.Runs) == 1 && r.Reference != "" {
		return refLabel(r.Runs[0], r.Reference)
	}
	return r.Reference
}

// caseRefText is refText for the cases measured over repetitions, whose
// reference a run's sweep of sizes beside them does not change.
func (r *Report) caseRefText() string {
	if len(r.Runs) == 1 && r.caseRef != "" {
		return refLabel(r.Runs[0], r.caseRef)
	}
	return r.caseRef
}
