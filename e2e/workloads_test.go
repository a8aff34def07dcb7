package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/testutil"
)

// lastJSON runs a client inside a namespace and returns its last JSON line
// (the total or result), failing the test on error.
func lastJSON(t *testing.T, ns string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := namespace.Do(ns, cmd.Run); err != nil {
		t.Fatalf("%s in %s: %v\n%s", strings.Join(args[1:3], " "), ns, err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		t.Fatalf("%v: last line %q: %v", args[1:3], lines[len(lines)-1], err)
	}
	return v
}

// lockedBuffer is a server's stderr, written by its copying goroutine
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitListening waits until every server has said on stderr that it
// listens: it prints so after its sockets are bound, so a client started
// then finds them.
func waitListening(t *testing.T, logs ...*lockedBuffer) {
	t.Helper()
	err := poll.Until(context.Background(), 10*time.Second, 10*time.Millisecond, func() (bool, error) {
		for _, l := range logs {
			if !strings.Contains(l.String(), "listening on") {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		for _, l := range logs {
			t.Logf("server stderr: %s", l.String())
		}
		t.Fatalf("servers not listening: %v", err)
	}
}

// TestSocketWorkloadsAcrossModes runs every socket workload between two
// containers (or hosts, for bare) of a lab, on bare and on the overlay.
func TestSocketWorkloadsAcrossModes(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	for _, mode := range []string{"bare", "overlay"} {
		t.Run(mode, func(t *testing.T) {
			m, _ := drivers.Catalog().Mode(mode)
			name := "wl" + fmt.Sprint(time.Now().UnixNano()%10000) + "_" + mode
			self, err := owner.Self()
			if err != nil {
				t.Fatal(err)
			}
			l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"ext", "client", "server"}, false), Port: 5201, Owner: self})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = drivers.Catalog().Down(name)
			})
			srv, _ := l.Endpoint("server")
			cli, _ := l.Endpoint("client")
			host := strings.Split(srv.Internal, ":")[0]
			var logs []*lockedBuffer
			for i, role := range []string{"stream", "rr", "udp"} {
				log := &lockedBuffer{}
				p, err := process.Start(process.Spec{Lab: name, Name: role, NetNS: srv.NS, Container: srv.Container,
					Args: []string{bin, "serve", role, "--listen", fmt.Sprintf(":%d", 5201+i)}, Stderr: log})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = p.Stop(2 * time.Second) })
				logs = append(logs, log)
			}
			waitListening(t, logs...)
			at := func(port int) string { return fmt.Sprintf("%s:%d", host, port) }

			tcp := lastJSON(t, cli.NS, bin, "stream", "--server", at(5201), "-t", "2s", "-P", "2", "--json")
			if bps, _ := tcp["receiver_bits_per_second"].(float64); bps < 1e8 || tcp["sender_bytes"] != tcp["receiver_bytes"] {
				t.Errorf("stream tcp: %v", tcp)
			}
			// Paced rates: never above the target; the lower bound only
			// catches gross pacing faults, since a busy CI machine's stalls
			// longer than the pacer's burst are not paid back (by design,
			// see udpseq.Pacer; its exact pacing is unit-tested).
			udp := lastJSON(t, cli.NS, bin, "stream", "--server", at(5201), "-t", "2s", "--udp", "-b", "50M", "--json")
			if bps, _ := udp["receiver_bits_per_second"].(float64); bps < 25e6 || bps > 52.5e6 || udp["loss_percent"].(float64) >= 1 {
				t.Errorf("stream udp at 50 Mbit/s: %v", udp)
			}
			rr := lastJSON(t, cli.NS, bin, "rr", "--server", at(5202), "-t", "2s", "--json")
			rtt, _ := rr["round_trip_us"].(map[string]any)
			ow, _ := rr["one_way_us_half_rtt"].(map[string]any)
			if rr["transactions"].(float64) < 100 || rtt["p50"].(float64) <= 0 || ow["p50"].(float64) != rtt["p50"].(float64)/2 {
				t.Errorf("rr: %v", rr)
			}
			jit := lastJSON(t, cli.NS, bin, "jitter", "--server", at(5203), "-t", "2s", "--json")
			if bps := jit["bps"].(float64); bps < 5e6 || bps > 10.5e6 || jit["loss_pct"].(float64) >= 1 || jit["jitter_ms"].(float64) < 0 {
				t.Errorf("jitter at 10 Mbit/s: %v", jit)
			}
			// The datagram client's default packet follows the path MTU, as the
			// 2017 Raspberry Pi thesis (Coherence data grid) chose its UDP
			// payload by hand: 1468 bytes on 1500, 1418 on the 1450 overlay.
			dg := lastJSON(t, cli.NS, bin, "datagram", "--server", at(5203), "--count", "5000", "--rate", "100M", "--json")
			want := 1468.0
			if mode == "overlay" {
				want = 1418
			}
			if dg["packet_size"].(float64) != want || dg["received"].(float64)+dg["missing"].(float64) != 5000 {
				t.Errorf("datagram: %v (want packet size %v)", dg, want)
			}
		})
	}
	assertNothingLeft(t, bin)
}
