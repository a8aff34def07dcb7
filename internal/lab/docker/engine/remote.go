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

// Target is where an engine URL leads: the client options and the
// machine's address (for the lab's record, published ports and the swarm).
type Target struct {
	URL  string
	Addr string // the machine's address: an IP, or a name to resolve
	opts []client.Opt
}

// ParseURL resolves an engine URL: tcp:// and ssh:// by their host, any
// other word as a docker context (in $DOCKER_CONFIG or ~/.docker).
func ParseURL(raw string) (Target, error) {
	if !strings.Contains(raw, "://") {
		return contextTarget(raw)
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
		return Target{URL: raw, Addr: u.Hostname(), opts: []client.Opt{client.WithHost(raw)}}, nil
	case "ssh":
		if u.Hostname() == "" {
			return Target{}, fmt.Errorf("%s: want ssh://[USER@]HOST[:PORT]", raw)
		}
		argv := sshArgv(u)
		return Target{URL: raw, Addr: u.Hostname(), opts: []client.Opt{
			// The host is a placeholder: every connection is the dialer's.
			client.WithHost("http://docker.example.com"),
			client.WithDialContext(func(ctx context.Context, _, _ string) (net.Conn, error) { return dialCommand(ctx, argv) }),
		}}, nil
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

// contextTarget reads a docker context's engine from the docker CLI's
// context store: meta/<any>/meta.json holding {"Name", "Endpoints":
// {"docker": {"Host"}}}.
func contextTarget(name string) (Target, error) {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return Target{}, fmt.Errorf("docker context %s: %w", name, err)
		}
		dir = filepath.Join(home, ".docker")
	}
	metas, _ := filepath.Glob(filepath.Join(dir, "contexts", "meta", "*", "meta.json"))
	for _, p := range metas {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var m struct {
			Name      string
			Endpoints map[string]struct{ Host string }
		}
		if json.Unmarshal(b, &m) != nil || m.Name != name {
			continue
		}
		host := m.Endpoints["docker"].Host
		if !strings.HasPrefix(host, "tcp://") && !strings.HasPrefix(host, "ssh://") {
			return Target{}, fmt.Errorf("docker context %s: its engine %q is not tcp:// or ssh://", name, host)
		}
		t, err := ParseURL(host)
		if err != nil {
			return Target{}, fmt.Errorf("docker context %s: %w", name, err)
		}
		t.URL = name
		return t, nil
	}
	return Target{}, fmt.Errorf("docker context %s: not found in %s", name, filepath.Join(dir, "contexts"))
}

// Dial connects to the engine at an engine URL.
func Dial(raw string) (*client.Client, Target, error) {
	t, err := ParseURL(raw)
	if err != nil {
		return nil, t, err
	}
	cli, err := client.NewClientWithOpts(append(t.opts, client.WithAPIVersionNegotiation())...)
	if err != nil {
		return nil, t, fmt.Errorf("%s: %w", raw, err)
	}
	return cli, t, nil
}

// Ping says, in one line naming the URL, why the engine there does not
// answer (nil when it does).
func Ping(ctx context.Context, raw string) error {
	cli, _, err := Dial(raw)
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
// maps host to URL), noting the URLs in the lab's run dir first, so that
// Remove finds what cnperf makes there even if this fails halfway.
func (s *Set) UseEngines(ctx context.Context, hosts map[string]string) error {
	if err := s.writeOwner(); err != nil {
		return err
	}
	var lines []string
	for h, u := range hosts {
		lines = append(lines, h+" "+u)
	}
	if err := os.WriteFile(filepath.Join(RunDir(s.Lab), enginesFile), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	for h, u := range hosts {
		e, err := remoteEngine(ctx, h, u)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.engines[h] = e
		s.mu.Unlock()
	}
	return nil
}

// remoteEngine connects to host's engine at u.
func remoteEngine(ctx context.Context, host, u string) (*Engine, error) {
	cli, t, err := Dial(u)
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
	return &Engine{Host: host, Addr: addr, URL: u, Client: cli, Version: v.Version, API: v.APIVersion, Existing: true, Remote: true}, nil
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
	var urls []string
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

// leaveSwarm has each engine leave the swarm, the manager (first) last.
func leaveSwarm(urls []string) error {
	var errs []error
	for i := len(urls) - 1; i >= 0; i-- {
		if urls[i] == "" {
			continue
		}
		cli, _, err := Dial(urls[i])
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
