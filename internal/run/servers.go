package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

// checkServers refuses, before any lab, a ping-pong server command that
// this machine cannot run, on a driver that starts it from this machine's
// file system (lab.LocalFiles: the netns driver, whose containers share
// the mount tree).
func checkServers(cat lab.Catalog, s spec.Spec) error {
	sv := s.PingPong.Servers
	if sv == nil || s.Socket() || !slices.ContainsFunc(s.RunDrivers(), func(name string) bool {
		d, err := cat.Driver(name)
		lf, ok := d.(lab.LocalFiles)
		return err == nil && ok && lf.RunsLocalFiles()
	}) {
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

// startRole starts a role's server: the spec's own command or image when
// it names one, else cnperf's (args, args[0] the binary).
func (p *pingPong) startRole(e *env, role string, ep lab.Endpoint, args []string, v spec.ServerValues, logs string) error {
	argv, image, ok := p.ownServer(role, v)
	if !ok {
		return e.startServer(role, ep, args, logs)
	}
	return e.startServerImage(role, ep, argv, image, logs)
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
// pong directly from the siege host, then ping's /mping as siege asks, so
// that an implementation that answers /ping/4 but not the rest of the
// protocol is named before the run, not as a run of failed samples.
func (p *pingPong) checkProtocol(ctx context.Context, client *http.Client, pingAddr, pongAddr string) error {
	url := "http://" + pongAddr + "/pong/" + strconv.Itoa(protocolSize)
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
	url = "http://" + pingAddr + "/mping/" + strconv.Itoa(protocolSize)
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
