package report

import "fmt"

// busyWarnings are the warnings of runs whose machine was busy while they
// measured (record.Meta.Disturbance): one line each, naming the share of
// the machine's CPU and the limit. Runs that recorded no load have none.
func busyWarnings(runs []Run) []string {
	var out []string
	for _, run := range runs {
		if w := run.Meta.Disturbance().Warning(); w != "" {
			if len(runs) > 1 {
				w = fmt.Sprintf("%s: %s", run.Dir, w)
			}
			out = append(out, w)
		}
	}
	return out
}
