package docker

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestLinkNames: links are impaired on the hosts the driver emulates,
// refused on an existing engine and on other machines' engines.
func TestLinkNames(t *testing.T) {
	links := []conditions.Link{{Link: "server", Rate: "10mbit"}}
	topo := lab.ClientServers([]string{"client", "server"}, false)
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"emulated hosts", Options{}, ""},
		{"existing engine", Options{DockerHost: "unix:///var/run/docker.sock"}, "links: the docker driver impairs the links of the hosts it emulates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, err := Driver{}.LinkNames(lab.Config{Topology: topo, Options: tc.opts})
			if err == nil {
				err = conditions.CheckLinkNames("links", links, names)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckLinks: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("CheckLinks = %v, want it to start %q", err, tc.want)
			}
		})
	}
}
