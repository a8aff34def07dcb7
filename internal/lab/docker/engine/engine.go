// Package engine runs the Docker Engines of a lab's emulated hosts: one
// containerd for the lab, in the lab's switch namespace, and one dockerd per
// host, started inside the host's network namespace (as `nsenter --net`
// would) with its own data root, exec root, socket, containerd namespace and
// cgroup parent, and every address inside 198.18.0.0/15. Whatever they create
// lives under /run/cnperf/docker/<lab> and /var/lib/cnperf/docker/<lab>, so a
// lab's engines are found again from those paths alone, and Remove is
// idempotent.
package engine

import (
	"cmp"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/client"

	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/poll"
)

// Where a lab's engines keep their state: sockets, pid files, exec roots
// and logs under RunRoot, data roots (images, containers, swarm) under
// DataRoot.
const (
	RunRoot  = "/run/cnperf/docker"
	DataRoot = "/var/lib/cnperf/docker"
)

// Addresses of every engine, inside RFC 2544's benchmarking range. Each
// dockerd lives in its own host namespace, so all may share them.
const (
	BridgeIP    = "198.18.255.1/24"            // docker0
	LocalPool   = "198.19.0.0/17"              // user-defined bridges, docker_gwbridge
	SwarmPool   = "198.19.128.0/17"            // ingress and overlay networks
	PoolSize    = 24                           // subnets handed out from the pools
	dockerdName = "dockerd"                    // the binaries, found on PATH
	ctrdName    = "containerd"                 //
	readyWithin = 60 * time.Second             // a dockerd on a busy machine is slow to start
	stopWithin  = 20 * time.Second             // dockerd stops its containers first
	apiTimeout  = 30 * time.Second             // one API call
	ctrdSocket  = "containerd/containerd.sock" // under the lab's run dir
)

// Available says, in one line, why no engine can be started here (nil when
// one can): the binaries dockerd, containerd and runc must be installed.
func Available() error {
	var missing []string
	for _, b := range []string{dockerdName, ctrdName, "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("docker driver: %s not installed (apt-get install docker.io; scripts/install-deps.sh does)", strings.Join(missing, ", "))
	}
	return nil
}

// Host is one emulated host that gets an engine.
type Host struct {
	Name string // e.g. "server"
	NS   string // its network namespace
	Addr string // its underlay address, for the swarm
	// Bridge is docker0 as a network plugin leased it (Flannel's
	// subnet.env); zero: BridgeIP, the default MTU, masquerade on.
	Bridge Bridge
	// IPv6 has the engine translate IPv6 too: ip6tables rules for the
	// published ports of networks with IPv6 (NAT66), which Docker 20.10
	// makes only with experimental on.
	IPv6 bool
}

// Bridge is how a dockerd sets up docker0: --bip, --mtu and --ip-masq, as
// Flannel's mk-docker-opts.sh hands them to Docker.
type Bridge struct {
	IP           string // the bridge's address and prefix, e.g. 198.19.150.1/24
	MTU          int
	NoMasquerade bool // the network plugin masquerades (or nothing should)
}

// Engine is one running dockerd.
type Engine struct {
	Host    string
	NS      string
	Addr    string
	Socket  string // unix socket path
	Client  *client.Client
	Version string // the engine's version
	API     string // the API version spoken
	// CgroupParent is where the engine puts its containers' cgroups, relative
	// to each controller's root.
	CgroupParent string
	// URL and Existing are set for an engine cnperf did not start; Remote
	// for one on another machine, whose processes and namespaces this
	// machine cannot see.
	URL      string
	Existing bool
	Remote   bool
	target   Target // how a user's engine is reached (URL's TLS)
	proc     *daemon
}

// DockerHost is the engine's address as DOCKER_HOST takes it.
func (e *Engine) DockerHost() string {
	if e.URL != "" {
		return e.URL
	}
	return "unix://" + e.Socket
}

// Set is the engines of one lab.
type Set struct {
	Lab      string
	switchNS string
	owner    string // the owning process, as owner.ID writes it
	mu       sync.Mutex
	ctrd     *daemon
	engines  map[string]*Engine
	swarm    bool
	// JoinSwarm uses the swarm remote engines already form instead of
	// forming one.
	JoinSwarm bool
	// TCPPort, when set, has each dockerd cnperf starts also listen on
	// tcp://ADDR:TCPPort, its host's lab address: the emulated hosts then
	// serve as remote engines (the tests of engines:).
	TCPPort int
}

// NewSet prepares a lab's engines; containerd runs in switchNS. owner is
// the owning process (owner.ID's form), written to the lab's run dir
// before anything else so that `cnperf clean` spares a live owner's
// engines and removes a dead one's.
func NewSet(lab, switchNS, owner string) *Set {
	return &Set{Lab: lab, switchNS: switchNS, owner: owner, engines: map[string]*Engine{}}
}

// ownerFile, in a lab's run dir, holds the owning process.
const ownerFile = "owner"

// writeOwner creates the lab's run dir and records its owner in it.
func (s *Set) writeOwner() error {
	if err := os.MkdirAll(RunDir(s.Lab), 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(RunDir(s.Lab), ownerFile), []byte(s.owner+"\n"), 0o600)
}

// Owner returns the recorded owner of a lab's engines ("" when none was
// recorded).
func Owner(lab string) string {
	b, err := os.ReadFile(filepath.Join(RunDir(lab), ownerFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// RunDir and DataDir are the lab's directories.
func RunDir(lab string) string  { return filepath.Join(RunRoot, lab) }
func DataDir(lab string) string { return filepath.Join(DataRoot, lab) }

// Engine returns the running engine of a host, or nil.
func (s *Set) Engine(host string) *Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.engines[host]
}

// Start starts containerd (once) and a dockerd for each host not yet
// running one, side by side, and waits until each answers.
func (s *Set) Start(ctx context.Context, hosts []Host) error {
	var missing []Host
	for _, h := range hosts {
		if s.Engine(h.Name) == nil {
			missing = append(missing, h)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hosts = missing
	if err := Available(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.ctrd == nil {
		if err := s.writeOwner(); err != nil {
			s.mu.Unlock()
			return err
		}
		if err := noteDefaultPaths(); err != nil {
			s.mu.Unlock()
			return err
		}
		d, err := s.startContainerd(ctx)
		if err != nil {
			s.mu.Unlock()
			return err
		}
		s.ctrd = d
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(hosts))
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := s.startDockerd(ctx, h)
			if err != nil {
				errs[i] = fmt.Errorf("dockerd on %s: %w", h.Name, err)
				return
			}
			s.mu.Lock()
			s.engines[h.Name] = e
			s.mu.Unlock()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Set) startContainerd(ctx context.Context) (*daemon, error) {
	run := filepath.Join(RunDir(s.Lab), "containerd")
	data := filepath.Join(DataDir(s.Lab), "containerd")
	for _, d := range []string{run, data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	sock := filepath.Join(RunDir(s.Lab), ctrdSocket)
	// The CRI plugin (Kubernetes) is not needed and would look for CNI.
	cfg := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
`, data, filepath.Join(run, "state"), sock, sock+".ttrpc")
	cfgPath := filepath.Join(run, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	d, err := startDaemon(s.switchNS, run, ctrdName, "--config", cfgPath)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, d, readyWithin, func() error { _, err := os.Stat(sock); return err }); err != nil {
		d.Stop(stopWithin)
		return nil, fmt.Errorf("containerd: %w", err)
	}
	return d, nil
}

// DaemonConfig is an engine's daemon.json: its identity key at keyPath
// and, with ipv6, ip6tables on (and experimental, which Docker 20.10
// wants for it), so that published ports of networks with IPv6 get the
// same DNAT and masquerade in ip6tables as in iptables.
func DaemonConfig(keyPath string, ipv6 bool) []byte {
	if !ipv6 {
		return []byte(fmt.Sprintf("{\"deprecated-key-path\": %q}\n", keyPath))
	}
	return []byte(fmt.Sprintf("{\"deprecated-key-path\": %q, \"experimental\": true, \"ip6tables\": true}\n", keyPath))
}

func (s *Set) startDockerd(ctx context.Context, h Host) (*Engine, error) {
	run := filepath.Join(RunDir(s.Lab), h.Name)
	data := filepath.Join(DataDir(s.Lab), h.Name)
	for _, d := range []string{run, data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	// A configuration file of its own, so that the machine's daemon.json
	// (made for the user's own engine) does not apply; it keeps the
	// engine's identity key in the run dir, not in /etc/docker.
	cfg := filepath.Join(run, "daemon.json")
	if err := os.WriteFile(cfg, DaemonConfig(filepath.Join(run, "key.json"), h.IPv6), 0o600); err != nil {
		return nil, err
	}
	sock := filepath.Join(run, "docker.sock")
	ns := "cnperf-" + s.Lab + "-" + h.Name
	e := &Engine{Host: h.Name, NS: h.NS, Addr: h.Addr, Socket: sock,
		CgroupParent: "/cnperf/" + s.Lab + "/docker-" + h.Name}
	args := []string{"--config-file", cfg,
		"--containerd", filepath.Join(RunDir(s.Lab), ctrdSocket),
		"--containerd-namespace", ns,
		"--containerd-plugins-namespace", ns + "-plugins",
		"--data-root", data,
		"--exec-root", filepath.Join(run, "exec"),
		"--pidfile", filepath.Join(run, "dockerd.pid"),
		"-H", "unix://" + sock,
		"--bip", cmp.Or(h.Bridge.IP, BridgeIP),
		"--default-address-pool", fmt.Sprintf("base=%s,size=%d", LocalPool, PoolSize),
		"--cgroup-parent", e.CgroupParent,
		"--log-level", "warn",
	}
	if h.Bridge.MTU > 0 {
		args = append(args, "--mtu", strconv.Itoa(h.Bridge.MTU))
	}
	if h.Bridge.NoMasquerade {
		args = append(args, "--ip-masq=false")
	}
	if s.TCPPort != 0 {
		args = append(args, "-H", "tcp://"+net.JoinHostPort(h.Addr, strconv.Itoa(s.TCPPort)))
	}
	d, err := startDaemon(h.NS, run, dockerdName, args...)
	if err != nil {
		return nil, err
	}
	e.proc = d
	cli, err := client.NewClientWithOpts(client.WithHost(e.DockerHost()), client.WithAPIVersionNegotiation())
	if err != nil {
		d.Stop(stopWithin)
		return nil, err
	}
	e.Client = cli
	err = waitFor(ctx, d, readyWithin, func() error {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		v, err := cli.ServerVersion(c)
		e.Version, e.API = v.Version, v.APIVersion
		return err
	})
	if err != nil {
		cli.Close()
		d.Stop(stopWithin)
		return nil, err
	}
	return e, nil
}

// UseExisting runs every host's containers on an engine cnperf did not
// start (--docker-host), found at url (tcp:// with the TLS of the docker
// CLI's environment): cnperf creates only labelled containers and networks
// on it and removes just those. The address and its TLS are noted in the
// lab's run dir, so that Remove finds them after a crash.
func (s *Set) UseExisting(ctx context.Context, url string, hosts []string) error {
	t, err := existingTarget(url)
	if err != nil {
		return fmt.Errorf("docker host %s: %w", url, err)
	}
	cli, err := t.Client()
	if err != nil {
		return fmt.Errorf("docker host %s: %w", url, err)
	}
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := cli.ServerVersion(c)
	if err != nil {
		cli.Close()
		return fmt.Errorf("docker host %s does not answer: %w", url, err)
	}
	if err := s.writeOwner(); err != nil {
		cli.Close()
		return err
	}
	if err := os.WriteFile(filepath.Join(RunDir(s.Lab), existingFile), []byte(t.note()), 0o600); err != nil {
		cli.Close()
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range hosts {
		s.engines[h] = &Engine{Host: h, Addr: "127.0.0.1", URL: url, Client: cli, Version: v.Version, API: v.APIVersion, Existing: true, target: t}
	}
	return nil
}

// CheckExisting resolves --docker-host's URL as UseExisting does, without
// dialling it: the one line to print before using it (Warning; "" for
// none), or why it cannot be used (a bad URL, TLS files that cannot be
// read).
func CheckExisting(url string) (string, error) {
	t, err := existingTarget(url)
	if err != nil {
		return "", err
	}
	if t.TLS != nil {
		if _, err := t.TLS.Config(); err != nil {
			return "", fmt.Errorf("%s: %w", url, err)
		}
	}
	return Warning(t), nil
}

// existingFile, in a lab's run dir, holds the address of an engine cnperf
// uses but did not start.
const existingFile = "docker-host"

// Swarm makes the hosts one swarm, the first the manager, advertising
// their underlay addresses; overlay networks then span them.
func (s *Set) Swarm(ctx context.Context, hosts []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.swarm {
		return nil
	}
	if len(hosts) == 0 {
		return errors.New("swarm: no hosts")
	}
	var engines []*Engine
	for _, h := range hosts {
		e := s.engines[h]
		if e == nil {
			return fmt.Errorf("swarm: no engine on %s", h)
		}
		engines = append(engines, e)
	}
	c, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if s.JoinSwarm {
		if err := inSwarm(c, engines); err != nil {
			return err
		}
		s.swarm = true
		return nil
	}
	mgr := engines[0]
	if err := s.noteSwarm(mgr); err != nil {
		return err
	}
	if _, err := mgr.Client.SwarmInit(c, swarmInit(mgr.Addr, mgr.Remote)); err != nil {
		return fmt.Errorf("swarm init on %s: %w%s", mgr.Host, err, joinHint(mgr))
	}
	sw, err := mgr.Client.SwarmInspect(c)
	if err != nil {
		return fmt.Errorf("swarm inspect on %s: %w", mgr.Host, err)
	}
	for _, e := range engines[1:] {
		if err := s.noteSwarm(e); err != nil {
			return err
		}
		if err := e.Client.SwarmJoin(c, swarmJoin(e.Addr, mgr.Addr, sw.JoinTokens.Worker, e.Remote)); err != nil {
			return fmt.Errorf("swarm join from %s: %w%s", e.Host, err, joinHint(e))
		}
	}
	s.swarm = true
	return nil
}

// noteSwarm records, before it joins, a remote engine that Remove must
// take out of the swarm cnperf forms (an emulated one goes with its host).
func (s *Set) noteSwarm(e *Engine) error {
	if !e.Remote {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(RunDir(s.Lab), swarmFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(e.target.note() + "\n")
	return err
}

// joinHint tells a user whose engines already form a swarm how to use it.
func joinHint(e *Engine) string {
	if e.Remote {
		return " (engines already in a swarm: set engines.swarm: join)"
	}
	return ""
}

// inSwarm checks that every engine is an active node of one swarm.
func inSwarm(ctx context.Context, engines []*Engine) error {
	cluster := ""
	for _, e := range engines {
		info, err := e.Client.Info(ctx)
		if err != nil {
			return fmt.Errorf("engine %s: %w", e.DockerHost(), err)
		}
		if info.Swarm.LocalNodeState != "active" {
			return fmt.Errorf("engines.swarm join: engine %s of host %s is in no swarm (%s): leave engines.swarm unset for cnperf to form one", e.DockerHost(), e.Host, info.Swarm.LocalNodeState)
		}
		id := strings.Join(remoteManagers(info.Swarm.RemoteManagers), ",")
		if cluster != "" && id != cluster {
			return fmt.Errorf("engines.swarm join: engine %s of host %s is in another swarm (managers %s, not %s)", e.DockerHost(), e.Host, id, cluster)
		}
		cluster = id
	}
	return nil
}

// Engines returns the running engines, in no particular order.
func (s *Set) Engines() []*Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Engine
	for _, e := range s.engines {
		out = append(out, e)
	}
	return out
}

// daemon is a started dockerd or containerd.
type daemon struct {
	*process.Process
	name, log string
}

// gone is the error of a daemon that has exited, as who, with its log's
// last line (nil while it runs).
func (d *daemon) gone(who string) error {
	if done, err := d.Exited(); done {
		return fmt.Errorf("%s exited (%v): %s", who, err, process.LastLogLine(d.log))
	}
	return nil
}

// startDaemon starts bin in namespace ns, logging to dir/<bin>.log and
// recording its PID in dir/<bin>.cnperf-pid for Remove after a crash. The
// daemon gets its own process group: a Ctrl-C at the terminal reaches
// cnperf, which then stops the daemons in order, not all at once.
func startDaemon(ns, dir, bin string, args ...string) (*daemon, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, bin+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := namespace.Do(ns, cmd.Start); err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", bin, ns, err)
	}
	d := &daemon{Process: process.Watch(cmd), name: bin, log: logPath}
	if err := os.WriteFile(filepath.Join(dir, bin+pidSuffix), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
		d.Stop(stopWithin)
		return nil, err
	}
	return d, nil
}

const pidSuffix = ".cnperf-pid"

// waitFor polls ready until it succeeds, the daemon exits or the time is up.
func waitFor(ctx context.Context, d *daemon, within time.Duration, ready func() error) error {
	var last error
	err := poll.Until(ctx, within, 100*time.Millisecond, func() (bool, error) {
		if last = ready(); last == nil {
			return true, nil
		}
		return false, d.gone(d.name)
	})
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("%s not ready within %s (%v): %s", d.name, within, last, process.LastLogLine(d.log))
	}
	return err
}

// Check reports an engine whose dockerd has died.
func (e *Engine) Check() error {
	if e.proc == nil {
		return nil
	}
	return e.proc.gone("dockerd on " + e.Host)
}

// Check reports the first dead daemon of the set.
func (s *Set) Check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctrd != nil {
		if err := s.ctrd.gone(ctrdName); err != nil {
			return err
		}
	}
	for _, e := range s.engines {
		if err := e.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Usable says, in one line, why the docker driver cannot run here with the
// binary exe (nil when it can): the engine's binaries must be installed, and
// exe, which becomes the workload image, must be statically linked, as a
// FROM scratch image has no dynamic loader.
func Usable(exe string) error {
	if err := Available(); err != nil {
		return err
	}
	f, err := elf.Open(exe)
	if err != nil {
		return fmt.Errorf("docker driver: read %s: %w", exe, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("docker driver: %s is dynamically linked; build it with CGO_ENABLED=0 (scripts/install-deps.sh does)", exe)
		}
	}
	return nil
}
