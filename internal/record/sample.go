package record

import "github.com/cnperf/cnperf/internal/workload/pingpong"

// Sample is one ping-pong request as siege saw it. Its type is the
// workload's, which fills it as it measures; the run stores it as it is.
type Sample = pingpong.Sample
