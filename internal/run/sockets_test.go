package run

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// TestSocketClientsPairUp: a case's client processes are one from client
// to server without a placement, each placed client container Processes
// times against server i mod servers with one, and the chain's ends over
// a chain, each on the lab its topology describes.
func TestSocketClientsPairUp(t *testing.T) {
	for _, tc := range []struct{ name, head, test, hosts, want string }{
		{"plain", "", "{workload: stream, duration: 1s}", "client[client] server[server]", "client:client>server"},
		{"placed", "placement: {hosts: apart, servers: 2, clients: 3}\n", "{workload: stream, duration: 1s, servers: 2, processes: 2}",
			"client[client1 client2 client3] server[server1 server2]",
			"client1-0:client1>server1* client1-1:client1>server1* client2-0:client2>server2* client2-1:client2>server2* client3-0:client3>server1* client3-1:client3>server1*"},
		{"same host", "placement: {hosts: same, servers: 1, clients: 2}\n", "{workload: stream, duration: 1s}",
			"host[server1 client1 client2]", "client1-0:client1>server1* client2-0:client2>server1*"},
		{"chain", "chain: {hosts: 3}\n", "{workload: stream, duration: 1s}", "h1[client] h2[server2] h3[server3]", "client:client>server2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := spec.Parse(strings.NewReader("name: x\nmodes: [bare]\n"+tc.head+"tests:\n  - "+tc.test+"\n"), "x.yaml")
			if err != nil {
				t.Fatal(err)
			}
			cases, err := s.Cases()
			if err != nil {
				t.Fatal(err)
			}
			sc := newSocketCells(s, cases)
			l := &lab.Lab{Lab: record.Lab{Name: "x"}}
			var hosts []string
			for _, h := range sc.topology().Hosts {
				var roles []string
				for _, ep := range h.Endpoints {
					roles = append(roles, ep.Role)
					l.Endpoints = append(l.Endpoints, lab.Endpoint{Role: ep.Role, Host: h.Name})
				}
				hosts = append(hosts, h.Name+"["+strings.Join(roles, " ")+"]")
			}
			if strings.Join(hosts, " ") != tc.hosts {
				t.Errorf("hosts %s, want %s", strings.Join(hosts, " "), tc.hosts)
			}
			runs, err := sc.clients(&env{lab: l}, cases[0])
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runs {
				g := fmt.Sprintf("%s:%s>%s", r.name, r.client.Role, r.server.Role)
				if r.tagged {
					g += "*"
				}
				got = append(got, g)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("clients %s, want %s", strings.Join(got, " "), tc.want)
			}
		})
	}
}
