package spec_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/spec"
)

func TestServersFields(t *testing.T) {
	long := strings.Repeat("a", spec.MaxServerArgBytes+1)
	many := "[" + strings.Repeat("a, ", spec.MaxServerArgs) + "a]"
	for _, tc := range []struct{ doc, want string }{
		{"pingpong: {servers: {ping: [py, ping.py, '{listen}', '{pong_url}'], pong: [py, pong.py, '{port}']}}", ""},
		{"pingpong: {servers: {pong: [my-pong, '--port={port}']}}", ""},
		{"pingpong: {servers: {}}", "pingpong.servers: names no server"},
		{"pingpong: {servers: {ping: [py, '{pong_adress}']}}", "pingpong.servers.ping[1]: unknown placeholder {pong_adress}"},
		{"pingpong: {servers: {ping: ['', x]}}", "pingpong.servers.ping: the program is empty"},
		{"pingpong: {servers: {pong: [" + long + "]}}", "pingpong.servers.pong[0]: 4097 bytes"},
		{"pingpong: {servers: {pong: " + many + "}}", "pingpong.servers.pong: 65 arguments"},
		{"pingpong: {servers: {pong_image: 'bad image'}}", `pingpong.servers.pong_image "bad image": not an image reference`},
		{"driver: docker\npingpong: {servers: {pong_image: pp:go, pong: ['-asPong', '-port', '{port}']}}", ""},
		{"pingpong: {servers: {colour: red}}", `unknown field "pingpong.servers.colour"`},
	} {
		s, err := spec.Parse(strings.NewReader("name: x\nmodes: [bare]\n"+tc.doc+"\n"), "t")
		if err == nil {
			err = s.Validate()
		}
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%.60s: got %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestServerArgs(t *testing.T) {
	p := spec.Default().PingPong
	p.Retries, p.Timeout, p.MaxBody = 7, 1500*time.Millisecond, 1000
	got := p.Args([]string{"srv", "{listen}", "-h={host}", "{port}", "{pong_url}/x", "{pong}", "{pong_host}:{pong_port}", "{retries}", "{timeout_s}", "{max_size}", "{}{unknown"},
		spec.ServerValues{Listen: "0.0.0.0:8080", Pong: "198.18.0.3:8081"})
	want := []string{"srv", "0.0.0.0:8080", "-h=0.0.0.0", "8080", "http://198.18.0.3:8081/x", "198.18.0.3:8081", "198.18.0.3:8081", "7", "2", "1000", "{}{unknown"}
	if !slices.Equal(got, want) {
		t.Errorf("Args = %q,\nwant   %q", got, want)
	}
}
