package spec

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Servers names another implementation of the ping-pong protocol to run in
// place of cnperf's servers (Kratzke and Quint 2015 found that the HTTP library shapes the
// curves as much as the network). A role left out runs cnperf's server.
//
// On the netns driver Ping and Pong are argv, run in the endpoint's
// container; on the docker driver PingImage and PongImage are the images,
// and Ping and Pong, when given, their command (after the image's
// entrypoint). Placeholders in argv are replaced per lab (ServerPlaceholders).
type Servers struct {
	Ping      []string `yaml:"ping,omitempty" json:"ping,omitempty"`
	Pong      []string `yaml:"pong,omitempty" json:"pong,omitempty"`
	PingImage string   `yaml:"ping_image,omitempty" json:"ping_image,omitempty"`
	PongImage string   `yaml:"pong_image,omitempty" json:"pong_image,omitempty"`
}

// Bounds of pingpong.servers: an argv is a command line, not a script.
const (
	MaxServerArgs     = 64
	MaxServerArgBytes = 4096
)

// ServerPlaceholders are the words a server's argv may hold, each replaced
// by the lab's value when the server starts; see docs/workloads.md.
var ServerPlaceholders = []string{"listen", "host", "port", "pong_url", "pong", "pong_host", "pong_port", "retries", "timeout_s", "max_size"}

var placeholderRE = regexp.MustCompile(`\{([a-z_]+)\}`)

// ImageRE is an image reference's form, here and in a driver's section.
var ImageRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,499}$`)

// ServerValues are the placeholders' values for one lab.
type ServerValues struct {
	Listen string // where the server listens, HOST:PORT
	Pong   string // where ping reaches pong, HOST:PORT
}

// Args returns argv with its placeholders replaced for a lab.
func (p PingPong) Args(argv []string, v ServerValues) []string {
	host, port, _ := net.SplitHostPort(v.Listen)
	pongHost, pongPort, _ := net.SplitHostPort(v.Pong)
	vals := map[string]string{
		"listen": v.Listen, "host": host, "port": port,
		"pong_url": "http://" + v.Pong, "pong": v.Pong, "pong_host": pongHost, "pong_port": pongPort,
		"retries": strconv.Itoa(p.Retries), "timeout_s": strconv.Itoa(int((p.Timeout + 999_999_999) / 1_000_000_000)),
		"max_size": strconv.Itoa(p.MaxBody),
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = placeholderRE.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := vals[m[1:len(m)-1]]; ok {
				return v
			}
			return m // Validate refused it
		})
	}
	return out
}

// Command is how a role's server is started on a driver, for people.
func (s *Servers) Command(role string) string {
	if s == nil {
		return ""
	}
	argv, image := s.Ping, s.PingImage
	if role == "pong" {
		argv, image = s.Pong, s.PongImage
	}
	c := strings.Join(argv, " ")
	if image != "" {
		c = strings.TrimSpace("image " + image + " " + c)
	}
	return c
}

// checkServers bounds pingpong.servers. Which fields a driver of the run
// needs (commands or images) is the driver's to say (run checks it).
func (p PingPong) checkServers(f string) error {
	s := p.Servers
	if s == nil {
		return nil
	}
	if err := checkArgv(f+".servers.ping", s.Ping); err != nil {
		return err
	}
	if err := checkArgv(f+".servers.pong", s.Pong); err != nil {
		return err
	}
	for _, im := range []struct{ field, ref string }{{"ping_image", s.PingImage}, {"pong_image", s.PongImage}} {
		if im.ref != "" && !ImageRE.MatchString(im.ref) {
			return fmt.Errorf("%s.servers.%s %q: not an image reference", f, im.field, im.ref)
		}
	}
	if len(s.Ping)+len(s.Pong) == 0 && s.PingImage+s.PongImage == "" {
		return errors.New(f + ".servers: names no server (give ping or pong, or leave servers out)")
	}
	return nil
}

// checkArgv bounds one argv and refuses placeholders nobody fills.
func checkArgv(field string, argv []string) error {
	if len(argv) > MaxServerArgs {
		return fmt.Errorf("%s: %d arguments, more than %d", field, len(argv), MaxServerArgs)
	}
	if len(argv) > 0 && argv[0] == "" {
		return fmt.Errorf("%s: the program is empty", field)
	}
	for i, a := range argv {
		if len(a) > MaxServerArgBytes {
			return fmt.Errorf("%s[%d]: %d bytes, more than %d", field, i, len(a), MaxServerArgBytes)
		}
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("%s[%d]: holds a NUL byte", field, i)
		}
		for _, m := range placeholderRE.FindAllStringSubmatch(a, -1) {
			if !slices.Contains(ServerPlaceholders, m[1]) {
				return fmt.Errorf("%s[%d]: unknown placeholder {%s} (known: {%s})", field, i, m[1], strings.Join(ServerPlaceholders, "}, {"))
			}
		}
	}
	return nil
}
