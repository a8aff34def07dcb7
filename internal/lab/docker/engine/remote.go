package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab/namespace"

	"github.com/docker/docker/client"
)

// Engines on other machines (a spec's engines:): each lab host with
// endpoints is a machine whose engine cnperf reaches at a URL, tcp://HOST:PORT,
// ssh://[USER@]HOST[:PORT] (the docker CLI's `docker system dial-stdio` over
// ssh, as DOCKER_HOST=ssh:// does) or a docker context's name. cnperf makes
// only labelled containers and networks there and removes just those; the
// lab's run dir notes each host's URL (enginesFile), so that Remove finds
// them after a crash.

// enginesFile, in a lab's run dir, lists "HOST URL" per line; swarmFile
// lists the URLs of the swarm cnperf formed, manager first, for Remove to
// leave it.
const (
	enginesFile = "engines"
	swarmFile   = "swarm"
)

// answerWithin bounds the first call to an engine: one that does not
// answer by then is reported by URL.
const answerWithin = 10 * time.Second

// Target is where an engine URL leads: how to reach the engine, and the
// machine's address (for the lab's record, published ports and the swarm).
type Target struct {
	URL    string // as the user gave it: a URL or a docker context's name
	Host   string // the engine's URL (a context's endpoint)
	Scheme string // tcp, ssh (unix for --docker-host's own engine)
	Addr   string // the machine's address: an IP, or a name to resolve
	TLS    *TLS   // tcp:// over TLS; nil: plain
	argv   []string
}

// Resolve resolves an engine URL: tcp:// and ssh:// by their host, any
// other word as a docker context (in $DOCKER_CONFIG or ~/.docker, with its
// own TLS material). A tcp:// URL speaks TLS with given (engines.tls), else
// as the docker CLI's environment says (DOCKER_TLS_VERIFY, DOCKER_TLS,
// DOCKER_CERT_PATH), read through getenv; else plain. Nothing is dialled.
func Resolve(raw string, given *TLS, getenv func(string) string) (Target, error) {
	if !strings.Contains(raw, "://") {
		return contextTarget(raw, getenv)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", raw, err)
	}
	switch u.Scheme {
	case "tcp":
		if u.Hostname() == "" || u.Port() == "" {
			return Target{}, fmt.Errorf("%s: want tcp://HOST:PORT", raw)
		}
		t := Target{URL: raw, Host: raw, Scheme: "tcp", Addr: u.Hostname(), TLS: given}
		if t.TLS == nil {
			t.TLS = envTLSFiles(getenv)
		}
		return t, nil
	case "ssh":
		if u.Hostname() == "" {
			return Target{}, fmt.Errorf("%s: want ssh://[USER@]HOST[:PORT]", raw)
		}
		return Target{URL: raw, Host: raw, Scheme: "ssh", Addr: u.Hostname(), argv: sshArgv(u)}, nil
	case "unix":
		return Target{}, fmt.Errorf("%s: a unix socket is this machine's engine: use --docker-host for it", raw)
	}
	return Target{}, fmt.Errorf("%s: want tcp://HOST:PORT, ssh://[USER@]HOST[:PORT] or a docker context's name", raw)
}

// sshArgv is the command that carries the Docker API over ssh, as the
// docker CLI's connection helper runs it.
func sshArgv(u *url.URL) []string {
	argv := []string{"ssh", "-o", "BatchMode=yes"}
	if u.Port() != "" {
		argv = append(argv, "-p", u.Port())
	}
	host := u.Hostname()
	if u.User != nil && u.User.Username() != "" {
		host = u.User.Username() + "@" + host
	}
	return append(argv, "--", host, "docker", "system", "dial-stdio")
}

// contextTarget reads a docker context's engine and TLS material from the
// docker CLI's context store (readContext).
func contextTarget(name string, getenv func(string) string) (Target, error) {
	dir := configDir(getenv)
	host, files, err := readContext(dir, name)
	if err != nil {
		return Target{}, fmt.Errorf("docker context %s: %w", name, err)
	}
	if !strings.HasPrefix(host, "tcp://") && !strings.HasPrefix(host, "ssh://") {
		return Target{}, fmt.Errorf("docker context %s: its engine %q is not tcp:// or ssh://", name, host)
	}
	// The context's own TLS, never the environment's: as the docker CLI.
	t, err := Resolve(host, nil, func(string) string { return "" })
	if err != nil {
		return Target{}, fmt.Errorf("docker context %s: %w", name, err)
	}
	if t.Scheme == "tcp" {
		t.TLS = files
	}
	t.URL = name
	return t, nil
}

// Dial connects to the engine at an engine URL, with engines.tls (given)
// and this process's environment.
func Dial(raw string, given *TLS) (*client.Client, Target, error) {
	t, err := Resolve(raw, given, os.Getenv)
	if err != nil {
		return nil, t, err
	}
	cli, err := t.Client()
	return cli, t, err
}

// Client makes the Docker SDK's client for a resolved engine; nothing is
// dialled until its first call.
func (t Target) Client() (*client.Client, error) {
	var opts []client.Opt
	switch t.Scheme {
	case "ssh":
		argv := t.argv
		opts = []client.Opt{
			// The host is a placeholder: every connection is the dialer's.
			client.WithHost("http://docker.example.com"),
			client.WithDialContext(func(ctx context.Context, _, _ string) (net.Conn, error) { return dialCommand(ctx, argv) }),
		}
	default:
		if t.TLS != nil {
			o, err := t.TLS.clientOpts()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.URL, err)
			}
			opts = o
		}
		opts = append(opts, client.WithHost(t.Host))
		if strings.HasPrefix(t.Host, "tcp://") {
			// After WithHost, which sets up the transport's dialer.
			d := &net.Dialer{Control: namespace.RefuseLabFromMachine}
			opts = append(opts, client.WithDialContext(d.DialContext))
		}
	}
	cli, err := client.NewClientWithOpts(append(opts, client.WithAPIVersionNegotiation())...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.URL, err)
	}
	return cli, nil
}

// note is how a lab's run dir records an engine, so that Remove reaches it
// again after a crash whatever the environment then: its URL, and the TLS
// material it was reached with, as JSON after a space ("URL" alone:
// plain, or a context's own).
func (t Target) note() string {
	if t.TLS == nil || t.Scheme != "tcp" || !strings.Contains(t.URL, "://") {
		return t.URL
	}
	b, _ := json.Marshal(t.TLS)
	return t.URL + " " + string(b)
}

// noted resolves a run dir's note of an engine (Target.note): a unix://
// URL as --docker-host's engine, the others as Resolve does with the TLS
// noted and no TLS from the environment.
func noted(line string) (Target, error) {
	raw, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	if strings.HasPrefix(raw, "unix://") {
		return Target{URL: raw, Host: raw, Scheme: "unix", Addr: "127.0.0.1"}, nil
	}
	var given *TLS
	if rest != "" {
		given = &TLS{}
		if err := json.Unmarshal([]byte(rest), given); err != nil {
			return Target{}, fmt.Errorf("%s: its TLS note %q: %w", raw, rest, err)
		}
	}
	return Resolve(raw, given, func(k string) string {
		switch k {
		case envTLSVerify, envTLS, envCertPath:
			return ""
		}
		return os.Getenv(k)
	})
}

// existingTarget resolves --docker-host's URL: unix:// as it is, tcp://
// with the TLS of this process's environment.
func existingTarget(raw string) (Target, error) {
	if strings.HasPrefix(raw, "unix://") {
		return Target{URL: raw, Host: raw, Scheme: "unix", Addr: "127.0.0.1"}, nil
	}
	return Resolve(raw, nil, os.Getenv)
}

// Ping says, in one line naming the URL, why the engine there does not
// answer (nil when it does).
func Ping(ctx context.Context, raw string, given *TLS) error {
	cli, _, err := Dial(raw, given)
	if err != nil {
		return err
	}
	defer cli.Close()
	c, cancel := context.WithTimeout(ctx, answerWithin)
	defer cancel()
	if _, err := cli.ServerVersion(c); err != nil {
		return fmt.Errorf("engine %s does not answer: %s", raw, oneLine(err))
	}
	return nil
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// UseEngines runs each host's containers on the engine at its URL (hosts
// maps host to URL; given is engines.tls), noting the URLs and their TLS
// in the lab's run dir first, so that Remove finds what cnperf makes there
// even if this fails halfway.
func (s *Set) UseEngines(ctx context.Context, hosts map[string]string, given *TLS) error {
	if err := s.writeOwner(); err != nil {
		return err
	}
	targets := map[string]Target{}
	var lines []string
	for h, u := range hosts {
		t, err := Resolve(u, given, os.Getenv)
		if err != nil {
			return fmt.Errorf("engine of host %s: %w", h, err)
		}
		targets[h] = t
		lines = append(lines, h+" "+t.note())
	}
	if err := os.WriteFile(filepath.Join(RunDir(s.Lab), enginesFile), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	for h, t := range targets {
		e, err := remoteEngine(ctx, h, t)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.engines[h] = e
		s.mu.Unlock()
	}
	return nil
}

// remoteEngine connects to host's engine at t.
func remoteEngine(ctx context.Context, host string, t Target) (*Engine, error) {
	u := t.URL
	cli, err := t.Client()
	if err != nil {
		return nil, err
	}
	c, cancel := context.WithTimeout(ctx, answerWithin)
	defer cancel()
	v, err := cli.ServerVersion(c)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("engine %s of host %s does not answer: %s", u, host, oneLine(err))
	}
	addr, err := hostIP(t.Addr)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("engine %s of host %s: %w", u, host, err)
	}
	return &Engine{Host: host, Addr: addr, URL: u, Client: cli, Version: v.Version, API: v.APIVersion, Existing: true, Remote: true, target: t}, nil
}

// hostIP is a machine's IPv4 address: the swarm advertises it and clients
// dial it.
func hostIP(name string) (string, error) {
	if ip := net.ParseIP(name); ip != nil {
		return ip.String(), nil
	}
	ips, err := net.LookupIP(name)
	if err != nil {
		return "", err
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return ip.String(), nil
		}
	}
	return "", fmt.Errorf("%s has no IPv4 address", name)
}

// Remote says whether a lab runs on engines on other machines.
func Remote(lab string) bool {
	_, err := os.Stat(filepath.Join(RunDir(lab), enginesFile))
	return err == nil
}

// removeRemote removes a lab's containers and networks from every engine
// it used, then leaves the swarm cnperf formed for it (workers first).
func removeRemote(lab string) error {
	var urls []string // each engine's note (Target.note)
	for _, line := range readLines(filepath.Join(RunDir(lab), enginesFile)) {
		if _, u, ok := strings.Cut(line, " "); ok && !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	// Every engine's containers before any network: a swarm network is
	// removed on its manager only once no node has a container on it.
	var errs []error
	for _, u := range urls {
		if err := removeLabelledContainers(u, lab); err != nil {
			errs = append(errs, err)
		}
	}
	for _, u := range urls {
		if err := removeLabelledNetworks(u, lab); err != nil {
			errs = append(errs, err)
		}
	}
	if err := leaveSwarm(readLines(filepath.Join(RunDir(lab), swarmFile))); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err // kept: the next down or clean tries again
	}
	return os.RemoveAll(RunDir(lab))
}

// leaveSwarm has each engine leave the swarm, the manager (first) last;
// urls are the engines' notes (Target.note).
func leaveSwarm(urls []string) error {
	var errs []error
	for i := len(urls) - 1; i >= 0; i-- {
		if urls[i] == "" {
			continue
		}
		cli, err := connect(urls[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
		if err := cli.SwarmLeave(ctx, true); err != nil && !strings.Contains(err.Error(), "not part of a swarm") {
			errs = append(errs, fmt.Errorf("engine %s: leave the swarm: %w", urls[i], err))
		}
		cancel()
		cli.Close()
	}
	return errors.Join(errs...)
}

// commandConn is a connection over a command's standard input and output
// (ssh ... docker system dial-stdio).
type commandConn struct {
	cmd *exec.Cmd
	io.Reader
	io.WriteCloser
}

// dialCommand starts argv and returns its standard streams as a
// connection; closing it ends the command.
func dialCommand(_ context.Context, argv []string) (net.Conn, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return &commandConn{cmd: cmd, Reader: out, WriteCloser: in}, nil
}

func (c *commandConn) Close() error {
	_ = c.WriteCloser.Close()
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
	_ = c.cmd.Wait()
	return nil
}

// CloseWrite ends the command's input: the HTTP client half-closes.
func (c *commandConn) CloseWrite() error { return c.WriteCloser.Close() }

type commandAddr struct{}

func (commandAddr) Network() string { return "command" }
func (commandAddr) String() string  { return "command" }

func (c *commandConn) LocalAddr() net.Addr                { return commandAddr{} }
func (c *commandConn) RemoteAddr() net.Addr               { return commandAddr{} }
func (c *commandConn) SetDeadline(t time.Time) error      { return nil }
func (c *commandConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *commandConn) SetWriteDeadline(t time.Time) error { return nil }
