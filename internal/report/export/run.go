package export

import (
	"fmt"
	"io"

	"github.com/cnperf/cnperf/internal/record"
)

// ValidateFormat refuses a format Run cannot write, in the words of
// `cnperf export --format`.
func ValidateFormat(format string) error {
	if format != "ppbench" && format != "samples" && !IsFeed(format) {
		return fmt.Errorf("--format %q: want ppbench, samples, openmetrics, opensearch or perfdash", format)
	}
	return nil
}

// CheckCarries refuses a format that would carry nothing of a run:
// ppbench and samples write ping-pong's requests, one line each, and a run
// of socket tests (socket) has none, so they would write a header alone;
// the feed formats carry socket tests' cases.
func CheckCarries(format string, socket bool) error {
	if socket && (format == "ppbench" || format == "samples") {
		return fmt.Errorf("--format %s: writes ping-pong's requests, and the run has socket tests; openmetrics, opensearch and perfdash carry them", format)
	}
	return nil
}

// Run writes a stored run's samples in format: "samples" as flat CSV
// (Samples), "ppbench" as ppbench's CSV log (PPBench) tagged machine, by
// default the run's "machine" label, else the host name it ran on.
func Run(w io.Writer, format string, meta *record.Meta, samples []record.Sample, machine string) error {
	if err := ValidateFormat(format); err != nil {
		return err
	}
	if IsFeed(format) {
		return fmt.Errorf("--format %s is written from the run's cases (WriteFeed), not its samples", format)
	}
	if format == "samples" {
		return Samples(w, samples)
	}
	if machine == "" {
		machine = meta.Spec.Labels["machine"]
	}
	if machine == "" {
		machine = meta.Machine.Hostname
	}
	return PPBench(w, samples, PPBenchOptions{MachineTag: machine, Concurrency: meta.Spec.PingPong.Concurrency})
}
