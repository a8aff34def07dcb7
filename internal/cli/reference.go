package cli

import (
	"slices"
	"strings"
)

// checkReference refuses a --reference that is no series of the runs
// read (each run's series keys, in order), as summary, export, check and
// report all do: a reference that is not there would leave every ratio
// out, or be quietly replaced. "" is each run's own reference.
func checkReference(ref string, runs ...[]string) error {
	if ref == "" {
		return nil
	}
	var all []string
	for _, modes := range runs {
		if slices.Contains(modes, ref) {
			return nil
		}
		for _, m := range modes {
			if !slices.Contains(all, m) {
				all = append(all, m)
			}
		}
	}
	if len(runs) > 1 {
		return usagef("--reference %q: no run has such a mode (they have %s)", ref, strings.Join(all, ", "))
	}
	return usagef("--reference %q: the run has no such mode (it has %s)", ref, strings.Join(all, ", "))
}
