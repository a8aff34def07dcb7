package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerrun"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// Options are the docker driver's options: where its engines are. With
// neither, it starts a dockerd on each emulated host.
type Options struct {
	// DockerHost runs the lab on an existing engine (e.g.
	// unix:///var/run/docker.sock) instead of one per emulated host: the
	// hosts are all this machine, and only single-host modes apply.
	DockerHost string
	// Engines runs the lab on engines on other machines: each host with
	// endpoints maps to its engine's URL (tcp://, ssh:// or a docker
	// context); hosts without are this machine. JoinSwarm uses the swarm
	// those engines form instead of forming one.
	Engines   map[string]string
	JoinSwarm bool
	// TLS is what tcp:// engines are reached with, engines.tls (nil: the
	// docker CLI's environment, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, or
	// plain).
	TLS *engine.TLS
}

// FlagDockerHost is the flag that names an existing engine.
const FlagDockerHost = "docker-host"

// Flags: --docker-host, or $DOCKER_HOST as for the docker CLI when
// --driver docker is given without it; it runs the spec on this driver.
func (Driver) Flags() []lab.Flag {
	return []lab.Flag{{Name: FlagDockerHost, Selects: true, RunOnly: true,
		Env: "DOCKER_HOST", EnvSays: "running on that engine (unset it for emulated hosts, a dockerd each)",
		Help: "run the docker driver on an existing engine, e.g. unix:///var/run/docker.sock, or tcp://HOST:2376 over TLS with $DOCKER_TLS_VERIFY and $DOCKER_CERT_PATH (single-host modes: bare, host, bridge); --driver docker takes $DOCKER_HOST too"}}
}

// options is cfg's Options (none given: emulated hosts).
func options(cfg lab.Config) Options {
	o, _ := cfg.Options.(Options)
	return o
}

// Options decodes --docker-host and the spec's engines: block. An existing
// engine is this machine: the spec's conditions and modes that span hosts
// are refused in the flag's words; engines are asked whether they answer,
// before anything is built, and plain tcp:// to another machine is warned
// of.
func (Driver) Options(in lab.OptionsInput) (any, error) {
	var o Options
	if h := in.Flags[FlagDockerHost]; h != "" {
		if !strings.HasPrefix(h, "unix://") && !strings.HasPrefix(h, "tcp://") {
			return nil, fmt.Errorf("--docker-host %q: want unix:///PATH or tcp://HOST:PORT", h)
		}
		warning, err := engine.CheckExisting(h)
		if err != nil {
			return nil, fmt.Errorf("--docker-host: %v", err)
		}
		if warning != "" && in.Warn != nil {
			fmt.Fprintln(in.Warn, warning)
		}
		for _, l := range in.Spec.Labs() {
			if l.Conditions.HasIPv6() {
				return nil, fmt.Errorf("--docker-host: ip_family %s: cnperf builds IPv6 on the hosts it emulates only, not on an existing engine", l.Conditions.Family())
			}
			if !l.Conditions.Empty() {
				return nil, fmt.Errorf("--docker-host: conditions (%s) change the hosts, which on an existing engine is this machine: use emulated hosts", l.Conditions.Label())
			}
		}
		var single []string
		for _, m := range in.Modes {
			if lab.IsSingleHost(m) {
				single = append(single, m.Name())
			}
		}
		for _, name := range in.Spec.Modes {
			i := slices.IndexFunc(in.Modes, func(m lab.Mode) bool { return m.Name() == name })
			if i >= 0 && !lab.IsSingleHost(in.Modes[i]) {
				return nil, fmt.Errorf("--docker-host: mode %s needs emulated hosts, a dockerd each; on one engine only %s run (use --modes)", name, lab.JoinAnd(single))
			}
		}
		o.DockerHost = h
	}
	e, err := spec.Decode[Engines](in.Spec.Engines, "engines")
	if err != nil {
		return nil, err
	}
	if e != nil {
		o.Engines, o.JoinSwarm = e.Hosts, e.Swarm == swarmJoin
		if t := e.TLS; t != nil {
			o.TLS = &engine.TLS{CA: t.CA, Cert: t.Cert, Key: t.Key, SkipVerify: !t.Verifies()}
		}
		for _, l := range in.Spec.Labs() {
			if l.Conditions.HasIPv6() {
				return nil, fmt.Errorf("engines: ip_family %s: cnperf builds IPv6 on the hosts it emulates only, not on other machines' engines", l.Conditions.Family())
			}
		}
		// Before anything is built: every engine must answer.
		if err := CheckEngines(context.Background(), in.Topology, o.Engines, o.TLS); err != nil {
			return nil, err
		}
		if in.Warn != nil {
			for _, line := range EngineWarnings(o.Engines, o.TLS) {
				fmt.Fprintln(in.Warn, line)
			}
		}
	}
	return o, nil
}

// Preflight is the netns driver's (the emulated hosts are its), plus a
// binary the engines can run as the workload image.
func (Driver) Preflight(in lab.PreflightInput) error {
	if err := netns.Preflight(); err != nil {
		return err
	}
	if err := engine.Usable(in.Exe); err != nil {
		return lab.Failure{Err: err}
	}
	return nil
}

// Capabilities: a spec's own ping and pong servers run as images on the
// engines (pingpong.servers' ping_image and pong_image); on an existing
// engine every lab shares this machine's stack, and on engines of other
// machines each machine's.
func (Driver) Capabilities(o any) lab.Capabilities {
	opts, _ := o.(Options)
	return lab.Capabilities{RunsImages: true, ImpairsLinks: true, SharesStack: opts.DockerHost != "" || len(opts.Engines) > 0}
}

// Runtime is a docker lab's engines as the runner uses them: servers are
// containers in the endpoints' sandboxes, clients execs in them.
type Runtime struct {
	lab.BaseRuntime // no node daemons
	set             *engine.Set
	lab             string
	cpus            []int
	sight           lab.Sight
	// local starts the processes of endpoints without a sandbox in their
	// namespace.
	local *netns.Runtime
}

func newRuntime(l *lab.Lab, set *engine.Set, sight lab.Sight) *Runtime {
	return &Runtime{set: set, lab: l.Name, cpus: l.HostCPUs(), sight: sight, local: netns.NewRuntime(l)}
}

// where says where an endpoint's processes run.
func (r *Runtime) where(ep lab.Endpoint) (dockerrun.Where, error) {
	e := r.set.Engine(ep.Host)
	if e == nil {
		return dockerrun.Where{}, fmt.Errorf("no engine on host %s", ep.Host)
	}
	return dockerrun.Where{Client: e.Client, Lab: r.lab, Sandbox: ep.Docker.Sandbox,
		SandboxPID: ep.Docker.SandboxPID, Image: ep.Docker.Image, CPUs: r.cpus, Remote: e.Remote}, nil
}

// StartServer starts s as a container in ep's sandbox: of cnperf's image
// (which runs s.Args after the binary) or of s.Image with s.Args as its
// command.
func (r *Runtime) StartServer(ep lab.Endpoint, s lab.Server) (lab.Proc, error) {
	if ep.Docker == nil {
		return r.local.StartServer(ep, s)
	}
	w, err := r.where(ep)
	if err != nil {
		return nil, err
	}
	args := s.Args
	if s.Image != "" {
		w.Image = s.Image
	} else if len(args) > 0 {
		args = args[1:] // cnperf's image runs the binary itself
	}
	srv, err := dockerrun.StartServer(w, s.Role, args, s.Log)
	if err != nil {
		return nil, fmt.Errorf("%s server (image %s): %w", s.Role, w.Image, err)
	}
	return srv, nil
}

// StartClient starts args as an exec in ep's sandbox.
func (r *Runtime) StartClient(ep lab.Endpoint, name string, args []string, stdout, stderr io.Writer) (lab.Proc, error) {
	if ep.Docker == nil {
		return r.local.StartClient(ep, name, args, stdout, stderr)
	}
	w, err := r.where(ep)
	if err != nil {
		return nil, err
	}
	return dockerrun.StartExec(w, args[1:], stdout, stderr)
}

// Alive reports an engine whose daemon has died.
func (r *Runtime) Alive() error { return r.set.Check() }

// Sight: emulated hosts' engines are this machine's and in cnperf's
// cgroups; an existing engine's containers are out of their sight, and
// other machines' engines out of this machine's.
func (r *Runtime) Sight() lab.Sight { return r.sight }

// Record reads the delay lines' counters, as on the netns driver.
func (r *Runtime) Record(l *lab.Lab) error { return netns.ReadCounters(l) }

// Flap carries out the links' flaps on the emulated hosts,
// as the netns driver does; a lab on engines cnperf did not start has
// none (CheckLinks refuses them).
func (r *Runtime) Flap(start time.Time) func() []record.Flap { return r.local.Flap(start) }

// LinkNames are the links of the hosts the driver emulates, as the netns
// driver's; engines whose hosts cnperf did not build (an existing engine,
// other machines') have none it can impair.
func (Driver) LinkNames(cfg lab.Config) ([]string, error) {
	if o := options(cfg); o.DockerHost != "" || len(o.Engines) > 0 {
		return nil, errors.New("links: the docker driver impairs the links of the hosts it emulates, not an existing engine's or other machines'")
	}
	return netns.Driver{}.LinkNames(cfg)
}

var _ lab.Runtime = (*Runtime)(nil)

// SandboxNS is the network namespace of a host's sandbox.
func (Driver) SandboxNS(labName, host string) (string, error) {
	return engine.SandboxNetNS(labName, host)
}
