package docker

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/spec"
)

// Engines is a spec's engines: section, which runs the driver on Docker
// Engines of other machines: each lab host that carries endpoints is a
// machine whose engine cnperf reaches at a URL; a host without endpoints
// (ping-pong's siege) is the machine cnperf runs on. cnperf forms a swarm
// of them for the overlay, or uses the one they form (swarm: join).
type Engines struct {
	// Hosts maps a lab host (siege, ping, pong; a placement's h1, h2) to
	// its engine: tcp://HOST:PORT, ssh://[USER@]HOST[:PORT] or the name of
	// a docker context.
	Hosts map[string]string `yaml:"hosts" json:"hosts"`
	// Swarm is "form" (the default: the first host's engine inits a swarm,
	// the others join, and all leave it when the lab is removed) or
	// "join" (the engines already are nodes of one swarm; cnperf leaves it
	// as it is).
	Swarm string `yaml:"swarm,omitempty" json:"swarm,omitempty"`
	// TLS is what every tcp:// engine is reached with. Unset, the docker
	// CLI's environment decides (DOCKER_TLS_VERIFY, DOCKER_CERT_PATH); a
	// docker context always brings its own.
	TLS *EngineTLS `yaml:"tls,omitempty" json:"tls,omitempty"`
}

// EngineTLS is engines.tls: files of the machine cnperf runs on, as the
// docker CLI's --tlscacert, --tlscert and --tlskey take them, and whether
// to verify the engines' certificates (default true).
type EngineTLS struct {
	CA     string `yaml:"ca,omitempty" json:"ca,omitempty"`
	Cert   string `yaml:"cert,omitempty" json:"cert,omitempty"`
	Key    string `yaml:"key,omitempty" json:"key,omitempty"`
	Verify *bool  `yaml:"verify,omitempty" json:"verify,omitempty"`
}

// Verifies says whether the engines' certificates are checked.
func (t EngineTLS) Verifies() bool { return t.Verify == nil || *t.Verify }

// maxTLSPath bounds a path in engines.tls.
const maxTLSPath = 4096

// The values of engines.swarm.
const (
	swarmForm = "form"
	swarmJoin = "join"
)

// maxEngines bounds engines.hosts: a lab has at most 250 hosts.
const maxEngines = 250

var (
	engineHostRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,9}$`)
	contextRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$`)
)

// CheckSpec decodes and bounds engines: and refuses what only emulated
// hosts allow, whichever driver the spec runs on. Whether each host with
// endpoints has an engine, and whether each engine answers, Options says.
func (Driver) CheckSpec(s spec.Spec) error {
	e, err := spec.Decode[Engines](s.Engines, "engines")
	if e == nil || err != nil {
		return err
	}
	switch {
	case len(e.Hosts) == 0:
		return errors.New("engines.hosts: none; map each lab host with endpoints to tcp://HOST:PORT, ssh://[USER@]HOST[:PORT] or a docker context")
	case len(e.Hosts) > maxEngines:
		return fmt.Errorf("engines.hosts: %d, more than %d", len(e.Hosts), maxEngines)
	case e.Swarm != "" && e.Swarm != swarmForm && e.Swarm != swarmJoin:
		return fmt.Errorf("engines.swarm %q: want %s or %s", e.Swarm, swarmForm, swarmJoin)
	case !slices.Equal(s.RunDrivers(), []string{Name}):
		return fmt.Errorf("engines: only the docker driver runs on engines (driver: docker), not %s", strings.Join(s.RunDrivers(), ", "))
	case !s.Conditions.Empty() || len(s.Variants) > 0:
		return errors.New("engines: conditions and variants change the hosts, which are the engines' own machines: cnperf changes only hosts it emulates")
	case s.Instances > 1:
		return fmt.Errorf("engines: instances %d: the instances of a mode would share the engines' networks (their subnets and names); use 1", s.Instances)
	case s.Chain != nil:
		return errors.New("engines: chain: only the netns driver builds chains")
	}
	if err := e.TLS.check(); err != nil {
		return err
	}
	for _, h := range slices.Sorted(maps.Keys(e.Hosts)) {
		if !engineHostRE.MatchString(h) {
			return fmt.Errorf("engines.hosts: %q is not a host name (1-10 of a-z and 0-9, starting with a letter)", h)
		}
		if err := checkEngineURL(e.Hosts[h]); err != nil {
			return fmt.Errorf("engines.hosts.%s: %w", h, err)
		}
	}
	return nil
}

// check refuses a certificate without its key (or a key without its
// certificate) and paths no file can have; whether the files exist and
// hold what they should is the driver's to say, before anything is built.
func (t *EngineTLS) check() error {
	if t == nil {
		return nil
	}
	for _, f := range []struct{ name, path string }{{"ca", t.CA}, {"cert", t.Cert}, {"key", t.Key}} {
		if len(f.path) > maxTLSPath || strings.ContainsRune(f.path, 0) {
			return fmt.Errorf("engines.tls.%s: not a path (at most %d bytes, no NUL)", f.name, maxTLSPath)
		}
	}
	switch {
	case t.Cert != "" && t.Key == "":
		return errors.New("engines.tls: cert without key: give both, or neither")
	case t.Key != "" && t.Cert == "":
		return errors.New("engines.tls: key without cert: give both, or neither")
	case t.CA == "" && t.Cert == "" && t.Verifies():
		return errors.New("engines.tls: no ca, cert or key: give the CA that signed the engines' certificates (ca) and the client's certificate and key")
	}
	return nil
}

// checkEngineURL checks an engine URL's form: tcp://HOST:PORT,
// ssh://[USER@]HOST[:PORT], or a context name.
func checkEngineURL(raw string) error {
	if !strings.Contains(raw, "://") {
		if !contextRE.MatchString(raw) {
			return fmt.Errorf("%q: want tcp://HOST:PORT, ssh://[USER@]HOST[:PORT] or a docker context's name", raw)
		}
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q: %v", raw, err)
	}
	port := u.Port()
	switch {
	case u.Scheme != "tcp" && u.Scheme != "ssh":
		return fmt.Errorf("%q: want tcp:// or ssh:// (a unix socket is this machine's: --docker-host)", raw)
	case u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "":
		return fmt.Errorf("%q: want %s://HOST:PORT, nothing after it", raw, u.Scheme)
	case u.Scheme == "tcp" && port == "":
		return fmt.Errorf("%q: want tcp://HOST:PORT", raw)
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: port %s: want 1 to 65535", raw, port)
		}
	}
	return nil
}
