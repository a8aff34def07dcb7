package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/record"
)

// Disturbed makes every result "cannot tell" when a run it was judged on
// was measured on a busy machine (record.Meta.Disturbance), and says why:
// contention moves every ratio, most those of the modes that cost the most
// CPU, so neither "holds" nor "broken" can be trusted. dirs are the runs
// the results rest on: the run, and for a baseline's results the baseline
// too. Runs that recorded no load (written before it was) pass as quiet.
func Disturbed(results []Result, dirs ...string) ([]Result, error) {
	why, err := busyRuns(dirs)
	if err != nil || len(why) == 0 {
		return results, err
	}
	out := make([]Result, len(results))
	for i, r := range results {
		line := strings.TrimLeft(strings.TrimPrefix(r.Line, r.Verdict.String()), " ")
		r.Verdict = CannotTell
		r.Line = fmt.Sprintf("%-11s %s; but %s", CannotTell, line, strings.Join(why, "; and "))
		out[i] = r
	}
	return out, nil
}

// busyRuns says, for each run of dirs measured on a busy machine, so and why.
func busyRuns(dirs []string) ([]string, error) {
	var why []string
	for i, dir := range dirs {
		if slices.Contains(dirs[:i], dir) {
			continue // a run checked against itself
		}
		rd, err := record.Open(dir)
		if err != nil {
			return nil, badInput("%v", err)
		}
		var meta record.Meta
		if err := rd.Meta(&meta); err != nil {
			return nil, badInput("%v", err)
		}
		if d := meta.Disturbance(); d.Disturbed {
			why = append(why, fmt.Sprintf("%s was measured on a busy machine: %s", dir, d.Why()))
		}
	}
	return why, nil
}
