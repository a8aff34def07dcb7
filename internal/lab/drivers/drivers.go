// Package drivers is the binary's registry of the lab: the drivers that
// build labs and the modes they build, as one lab.Catalog that the CLI and
// the runner take (they import no driver or mode themselves). Adding a
// driver means adding its package and one line in All.
package drivers

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/kube"
	"github.com/cnperf/cnperf/internal/lab/kube/kubecli"
	"github.com/cnperf/cnperf/internal/lab/modes"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/testcluster/clustercli"
)

// Catalog is the binary's drivers and modes, and the commands the drivers
// add to the CLI. The default driver comes first; a driver that builds on
// another's hosts comes after it (lab.Down removes last first). With
// extra, those drivers come after the binary's (a test's driver).
func Catalog(extra ...lab.Driver) lab.Catalog {
	all := []lab.Driver{netns.Driver{}, docker.Driver{}, kube.Driver{}}
	return lab.Catalog{Drivers: append(all, extra...), Modes: modes.All(), Commands: commands}
}

// commands are the kubernetes driver's commands and `cnperf cluster`, the
// test cluster it runs on.
func commands(version string, stdout, stderr io.Writer) []*cobra.Command {
	return append(kubecli.Commands(version, stdout, stderr), clustercli.Commands(stdout, stderr)...)
}
