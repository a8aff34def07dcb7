package report

import (
	"strings"

	"github.com/cnperf/cnperf/internal/analysis"
)

// variantRefs is, for a run that compares clusters and the reference its
// spec names, each series' own reference: the reference mode on the
// series' cluster and conditions (k8s-pod/flannel against k8s-host/flannel,
// not against the first cluster's). Nil for any other run, or a reference
// asked for (--reference), which is every series'.
func variantRefs(run Run, ref string) map[string]string {
	s := run.Meta.Spec
	if !s.ComparesClusters() || ref != s.ReferenceKey() {
		return nil
	}
	return s.VariantReferences()
}

// refOf is how run's series are compared with ref (variantRefs).
func refOf(run Run, ref string) analysis.RefOf {
	if refs := variantRefs(run, ref); refs != nil {
		return analysis.Within(refs)
	}
	return analysis.One(ref)
}

// perVariant follows the reference mode's name when each series is
// compared with that mode on its own cluster and conditions.
const perVariant = " on each series' own cluster and conditions"

// possessive is the reference's name in the possessive: "k8s-host's",
// or, per variant, "that k8s-host's".
func (iv intervals) possessive() string {
	if mode, ok := strings.CutSuffix(iv.ref, perVariant); ok {
		return "that " + mode + "'s"
	}
	return iv.ref + "'s"
}

// refLabel names the reference in the tables' words: ref, or each
// variant's own reference mode.
func refLabel(run Run, ref string) string {
	if variantRefs(run, ref) != nil {
		return run.Meta.Spec.Reference + perVariant
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

// RunIntervalsWithin is RunIntervals with each series against its own
// reference when the run compares clusters (variantRefs).
func RunIntervalsWithin(run Run, ref string, same float64) []analysis.RatioCI {
	return analysis.IntervalsWithin(RunCases(run, ref, same), refOf(run, ref))
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
