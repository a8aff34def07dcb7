package docker_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/testutil/speccases"
)

// TestEngines: the driver decodes a spec's engines: section strictly and
// bounds it in its own field names, one line each, whichever driver the
// spec runs on; a good one passes.
func TestEngines(t *testing.T) {
	const base = "name: x\ndriver: docker\nmodes: [bare, host]\n"
	speccases.Check(t, docker.Driver{}.CheckSpec, []speccases.Case{
		{"tcp, ssh and a context", base + "engines: {hosts: {ping: 'tcp://198.18.0.2:2375', pong: 'ssh://me@pong.example:2222', siege: my-ctx}}\n", ""},
		{"join an existing swarm", base + "engines: {hosts: {ping: 'tcp://a:1'}, swarm: join}\n", ""},
		{"no hosts", base + "engines: {hosts: {}}\n", "engines.hosts: none"},
		{"bad swarm", base + "engines: {hosts: {ping: 'tcp://a:1'}, swarm: merge}\n", `engines.swarm "merge": want form or join`},
		{"tcp without port", base + "engines: {hosts: {ping: 'tcp://a'}}\n", "engines.hosts.ping: \"tcp://a\": want tcp://HOST:PORT"},
		{"port out of range", base + "engines: {hosts: {ping: 'tcp://a:70000'}}\n", "engines.hosts.ping: \"tcp://a:70000\": port 70000"},
		{"unix socket", base + "engines: {hosts: {ping: 'unix:///var/run/docker.sock'}}\n", "engines.hosts.ping: \"unix:///var/run/docker.sock\": want tcp:// or ssh://"},
		{"a path after the host", base + "engines: {hosts: {ping: 'tcp://a:1/x'}}\n", "engines.hosts.ping: \"tcp://a:1/x\": want tcp://HOST:PORT, nothing after it"},
		{"bad context", base + "engines: {hosts: {ping: 'my ctx'}}\n", "engines.hosts.ping: \"my ctx\": want"},
		{"bad host name", base + "engines: {hosts: {Ping: 'tcp://a:1'}}\n", `engines.hosts: "Ping" is not a host name`},
		{"netns driver", "name: x\nmodes: [bare]\nengines: {hosts: {ping: 'tcp://a:1'}}\n", "engines: only the docker driver runs on engines (driver: docker), not netns"},
		{"both drivers", "name: x\ndrivers: [netns, docker]\nmodes: [bare, host]\nengines: {hosts: {ping: 'tcp://a:1'}}\n", "not netns, docker"},
		{"conditions", base + "conditions: {cores: 1}\nengines: {hosts: {ping: 'tcp://a:1'}}\n", "engines: conditions and variants change the hosts"},
		{"tls", base + "engines: {hosts: {ping: 'tcp://a:2376'}, tls: {ca: ca.pem, cert: cert.pem, key: key.pem}}\n", ""},
		{"tls without verification", base + "engines: {hosts: {ping: 'tcp://a:2376'}, tls: {verify: false}}\n", ""},
		{"tls cert without key", base + "engines: {hosts: {ping: 'tcp://a:2376'}, tls: {ca: ca.pem, cert: cert.pem}}\n", "engines.tls: cert without key"},
		{"tls key without cert", base + "engines: {hosts: {ping: 'tcp://a:2376'}, tls: {key: key.pem}}\n", "engines.tls: key without cert"},
		{"tls with nothing", base + "engines: {hosts: {ping: 'tcp://a:2376'}, tls: {verify: true}}\n", "engines.tls: no ca, cert or key"},
		{"tls unknown field", base + "engines:\n  hosts: {ping: 'tcp://a:2376'}\n  tls: {cacert: ca.pem}\n", `line 6: unknown field "engines.tls.cacert"`},
		{"a list for a map", base + "engines:\n  hosts: [a]\n", "line 5: engines.hosts: cannot unmarshal !!seq into map[string]string"},
		{"not a mapping", base + "engines: 3\n", "line 4: engines: cannot unmarshal !!int `3` into docker.Engines"},
		{"instances", base + "instances: 3\nengines: {hosts: {ping: 'tcp://a:1'}}\n", "engines: instances 3"},
	})
}
