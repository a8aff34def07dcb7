// Package modes lists the network setups cnperf can build. Adding a mode
// means adding its package and one line here.
package modes

import (
	"github.com/cnperf/cnperf/internal/lab/modes/k8shost"
	"github.com/cnperf/cnperf/internal/lab/modes/k8snodeport"
	"github.com/cnperf/cnperf/internal/lab/modes/k8spod"
	"github.com/cnperf/cnperf/internal/lab/modes/k8sservice"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/modes/bare"
	"github.com/cnperf/cnperf/internal/lab/modes/bridge"
	"github.com/cnperf/cnperf/internal/lab/modes/bridgerouted"
	"github.com/cnperf/cnperf/internal/lab/modes/flannel"
	"github.com/cnperf/cnperf/internal/lab/modes/host"
	"github.com/cnperf/cnperf/internal/lab/modes/links"
	"github.com/cnperf/cnperf/internal/lab/modes/macvlan"
	"github.com/cnperf/cnperf/internal/lab/modes/overlay"
	"github.com/cnperf/cnperf/internal/lab/modes/ovs"
	"github.com/cnperf/cnperf/internal/lab/modes/useroverlay"
	"github.com/cnperf/cnperf/internal/lab/modes/vethrouted"
)

// All returns every mode, reference first; Bryzgalov's (2014) techniques last.
func All() []lab.Mode {
	all := []lab.Mode{bare.Mode{}, host.Mode{}, bridge.Mode{}, macvlan.Mode{}, overlay.Mode{}}
	all = append(all, useroverlay.Modes()...)
	// The real Flannel beside cnperf's stand-ins for it.
	all = append(all, flannel.Modes()...)
	all = append(all, ovs.Mode{}, vethrouted.Mode{}, bridgerouted.Mode{}, links.Mode{})
	// A cluster's own datapaths, on the kubernetes driver only.
	return append(all, k8shost.Mode{}, k8spod.Mode{}, k8sservice.Mode{}, k8snodeport.Mode{})
}
