package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

// serverRun is one server process of a workload, to start on an endpoint
// for the whole run.
type serverRun struct {
	name  string // process, cgroup and log name
	ep    lab.Endpoint
	args  []string // cnperf's binary and its arguments, or an image's command
	image string   // the spec's own image ("": cnperf's)
	// port, when set, is what the server binds over protocols: it is up
	// once its process says so (lab.Bounder) or its namespace shows it.
	port      int
	protocols []string
}

// bindWait is how long servers get to bind their ports.
const bindWait = 10 * time.Second

// startServers starts a workload's servers on e in their order, through
// the lab's launcher, then waits until each that names a port has bound
// it, then until ready (the workload's own probe; nil: none) says the
// workload answers as its client will ask.
func (e *env) startServers(ctx context.Context, servers []serverRun, ready func(context.Context) error) error {
	if e.lab.Runtime == nil {
		return fmt.Errorf("lab %s: its driver started no launcher", e.lab.Name)
	}
	for _, s := range servers {
		p, err := e.lab.Runtime.StartServer(s.ep, lab.Server{Role: s.name, Args: s.args, Image: s.image, Log: filepath.Join(e.logs, e.logName(s.name))})
		if err != nil {
			return err
		}
		e.procs[s.name] = p
	}
	deadline := time.Now().Add(bindWait)
	for _, srv := range servers {
		if srv.port == 0 {
			continue
		}
		err := poll.Until(ctx, time.Until(deadline), 20*time.Millisecond, func() (bool, error) {
			if err := e.alive(); err != nil {
				return false, err
			}
			if b, ok := e.procs[srv.name].(lab.Bounder); ok {
				return b.Bound(srv.port, srv.protocols), nil
			}
			return namespace.Bound(e.procs[srv.name].PID(), srv.port, srv.protocols), nil
		})
		if errors.Is(err, poll.ErrTimeout) {
			return fmt.Errorf("%s did not bind port %d within %s; see logs/%s", srv.name, srv.port, bindWait, e.logName(srv.name))
		}
		if err != nil {
			return err
		}
	}
	if ready == nil {
		return nil
	}
	return ready(ctx)
}

// checkServers refuses, before any lab, pingpong.servers that a driver of
// the run cannot start: the drivers that run commands from this machine's
// files (lab.Capabilities.RunsLocalFiles: the netns driver, whose
// containers share the mount tree) need argv this machine can run, those
// that run images (RunsImages) images, and the others run cnperf's own
// servers only.
func checkServers(cat lab.Catalog, s spec.Spec) error {
	sv := s.PingPong.Servers
	if sv == nil || !s.RunsPingPong() {
		return nil
	}
	local := false
	for _, name := range s.RunDrivers() {
		d, err := cat.Driver(name)
		if err != nil {
			continue // CheckDrivers refused it before
		}
		switch c := d.Capabilities(nil); {
		case c.RunsLocalFiles:
			if len(sv.Ping) == 0 && sv.PingImage != "" || len(sv.Pong) == 0 && sv.PongImage != "" {
				return fmt.Errorf("pingpong.servers: the %s driver runs commands: give ping and pong as argv for the roles with an image", name)
			}
			local = true
		case c.RunsImages:
			if len(sv.Ping) > 0 && sv.PingImage == "" || len(sv.Pong) > 0 && sv.PongImage == "" {
				return fmt.Errorf("pingpong.servers: the %s driver runs images: give ping_image and pong_image for the roles with a command", name)
			}
		default:
			return fmt.Errorf("pingpong.servers: driver %s runs cnperf's servers only (%s run others)", name,
				driversThat(cat, func(c lab.Capabilities) bool { return c.RunsLocalFiles || c.RunsImages }))
		}
	}
	if !local {
		return nil
	}
	for _, r := range []struct {
		role string
		argv []string
	}{{"ping", sv.Ping}, {"pong", sv.Pong}} {
		if len(r.argv) == 0 {
			continue
		}
		if _, err := exec.LookPath(r.argv[0]); err != nil {
			return fmt.Errorf("pingpong.servers.%s: command %q: %w", r.role, r.argv[0], err)
		}
	}
	return nil
}

// ownServer returns the argv and image of a role's server from
// pingpong.servers, placeholders filled; ok is false when cnperf's own
// server runs. The lab's launcher runs them as its driver does: a command
// from this machine's file system (netns), an image with the command as
// its own (docker); the spec refuses what a driver cannot run.
func (p *pingPong) ownServer(role string, v spec.ServerValues) (argv []string, image string, ok bool) {
	sv := p.s.PingPong.Servers
	if sv == nil {
		return nil, "", false
	}
	argv, image = sv.Ping, sv.PingImage
	if role == "pong" {
		argv, image = sv.Pong, sv.PongImage
	}
	return p.s.PingPong.Args(argv, v), image, len(argv) > 0 || image != ""
}

// serverName names a role's server in messages: the spec's command, or
// cnperf's.
func (p *pingPong) serverName(role string) string {
	if c := p.s.PingPong.Servers.Command(role); c != "" {
		return fmt.Sprintf("%s server %q", role, c)
	}
	return fmt.Sprintf("%s server (cnperf serve %s)", role, role)
}

// notProtocol is the error for a server that answers 200 with a body the
// protocol does not allow: waiting longer will not mend it.
func (p *pingPong) notProtocol(role, url string, body []byte, want string) error {
	return fmt.Errorf("%s does not answer the ping-pong protocol: GET %s: 200 with %d bytes %.40q, want %s",
		p.serverName(role), url, len(body), body, want)
}

// protocolSize is the size the readiness check asks both servers for
// beyond /ping/4: large enough that a wrong length shows.
const protocolSize = 1000

// checkProtocol asks a ready lab's servers for a body of protocolSize:
// pong directly from the siege host (in namespace ns), then ping's /mping
// as siege asks, so that an implementation that answers /mping/4 but not
// the rest of the protocol is named before the run, not as a run of
// failed samples.
func (p *pingPong) checkProtocol(ctx context.Context, e *env, ns string) error {
	ping, err := e.lab.Endpoint("ping")
	if err != nil {
		return err
	}
	pong, err := e.lab.Endpoint("pong")
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DialContext: namespace.Dialer(ns), DisableKeepAlives: true}}
	url := "http://" + pong.External + "/pong/" + strconv.Itoa(protocolSize)
	body, code, err := get(ctx, client, url)
	if err != nil {
		return fmt.Errorf("%s: GET %s: %w", p.serverName("pong"), url, err)
	}
	if code != http.StatusOK {
		return fmt.Errorf("%s: GET %s: HTTP %d %.40q", p.serverName("pong"), url, code, body)
	}
	if !pingpong.LengthOK(protocolSize, len(body)) || !bytes.HasPrefix(body, []byte("po")) || !bytes.HasSuffix(body, []byte("ong")) {
		return p.notProtocol("pong", url, body, fmt.Sprintf("%d bytes p, o…, ng", protocolSize))
	}
	url = "http://" + ping.External + "/mping/" + strconv.Itoa(protocolSize)
	body, code, err = get(ctx, client, url)
	if err != nil {
		return fmt.Errorf("%s: GET %s: %w", p.serverName("ping"), url, err)
	}
	m, perr := pingpong.ParseMPing(body)
	if code != http.StatusOK || perr != nil || m.Code != http.StatusOK || m.Length != protocolSize {
		return p.notProtocol("ping", url, body, fmt.Sprintf(`{"length": %d, "code": 200, ...}`, protocolSize))
	}
	return nil
}

// get fetches url's body, bounded (an /mping answer is tens of bytes).
func get(ctx context.Context, client *http.Client, url string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return b, resp.StatusCode, err
}
