package run

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
)

// wrapLine turns one envelope line a client printed into a Record of case
// c, the line kept whole as its Data. An end line is stored as kind
// "total", the word runs have always stored.
func wrapLine(c workload.Case, line []byte) (record.Record, error) {
	env, err := workload.Decode(line)
	if err != nil {
		return record.Record{}, fmt.Errorf("client printed a line that is not a JSON envelope (%v): %q", err, truncate(line))
	}
	if env.Workload != c.Test.Workload {
		return record.Record{}, fmt.Errorf("client printed a %q record in a %s test", env.Workload, c.Test.Workload)
	}
	kind := env.Kind
	if kind == workload.KindEnd {
		kind = record.KindTotal
	}
	return record.Record{Workload: c.Test.Workload, Kind: kind, Case: c.Label, Test: c.Index, Param: c.Param, Value: c.Value,
		Data: append([]byte(nil), line...)}, nil
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}
