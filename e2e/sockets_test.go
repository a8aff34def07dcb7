package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
)

// readRecords returns a run's socket-workload records and cost lines.
func readRecords(t *testing.T, dir string) ([]record.Record, []record.Cost) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []record.Record
	var costs []record.Cost
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var probe struct {
			Workload string `json:"workload"`
		}
		if json.Unmarshal(sc.Bytes(), &probe) != nil {
			continue
		}
		switch probe.Workload {
		case "cost":
			var c record.Cost
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("cost line: %v", err)
			}
			costs = append(costs, c)
		case "stream", "rr", "jitter", "datagram":
			var r record.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("record: %v", err)
			}
			recs = append(recs, r)
		}
	}
	return recs, costs
}

// TestSocketPresetOnEveryMode runs every socket workload from a preset on
// all five modes, on each driver (the docker driver on real Docker Engines,
// one per emulated host), then reads the run back through summary and
// report.
func TestSocketPresetOnEveryMode(t *testing.T) {
	for _, driver := range []string{"netns", "docker"} {
		t.Run(driver, func(t *testing.T) { socketPresetOnEveryMode(t, driver) })
	}
}

func socketPresetOnEveryMode(t *testing.T, driver string) {
	testutil.RequireRoot(t)
	if driver == "docker" {
		testutil.RequireDocker(t)
	}
	var browser string
	if driver == "netns" {
		browser = chromium(t)
	}
	bin := testutil.Binary(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "run")
	cmd := exec.Command(bin, "run", "--preset", "sockets-tiny", "-o", dir, "--driver", driver)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	assertNothingLeft(t, bin)

	m := readMeta(t, dir)
	const cases, modes = 7, 5
	if m.Status != "complete" || len(m.Cells) != cases*modes {
		t.Fatalf("status %q, %d cells; want complete, %d", m.Status, len(m.Cells), cases*modes)
	}
	for _, c := range m.Cells {
		if c.Error != "" || c.Failed != 0 || c.Samples < 2 {
			t.Errorf("cell %d (%s on %s): %d records, error %q", c.Index, c.Case, c.Mode, c.Samples, c.Error)
		}
	}
	for _, mm := range m.Modes {
		if mm.Usage["stream-server"].CPUSeconds <= 0 || mm.Usage["udp-server"].Source == "" || mm.Bytes <= 0 {
			t.Errorf("%s: usage %+v, bytes %d", mm.Mode, mm.Usage, mm.Bytes)
		}
		// Modes with NAT publish the servers' TCP and UDP ports.
		if len(mm.Lab.Publish) != 6 {
			t.Errorf("%s publishes %v", mm.Mode, mm.Lab.Publish)
		}
	}
	recs, costs := readRecords(t, dir)
	totals := map[string]int{}
	for _, r := range recs {
		if r.Kind == "total" {
			totals[r.Case+"/"+r.Mode]++
			var probe struct {
				Request int `json:"request_size"`
			}
			_ = json.Unmarshal(r.Data, &probe)
			// fit_mtu: the path MTU − 32, 1418 on the 1450-byte overlay.
			if r.Case == "rr udp" && probe.Request != map[bool]int{true: 1418, false: 1468}[r.Mode == "overlay"] {
				t.Errorf("rr udp on %s: request %d bytes", r.Mode, probe.Request)
			}
		}
	}
	if len(totals) != cases*modes {
		t.Errorf("%d (case, mode) pairs with a total, want %d: %v", len(totals), cases*modes, totals)
	}
	if len(costs) != cases*modes {
		t.Errorf("%d cost lines, want one per cell (%d)", len(costs), cases*modes)
	}
	for _, c := range costs {
		if c.Client.CPUSeconds <= 0 || c.Client.Source == "" {
			t.Errorf("cell %d: client usage %+v", c.Cell, c.Client)
		}
	}
	for _, want := range []string{"stream udp length=1500", "rr crr", "jitter ms", "success %", "overlay"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run's summary lacks %q:\n%s", want, stdout.String())
		}
	}
	if driver == "docker" {
		checkDockerEndpoints(t, m)
		return
	}

	html := filepath.Join(tmp, "report.html")
	tabs := filepath.Join(tmp, "tabs")
	out, err := exec.Command(bin, "report", dir, "-o", html, "--tables", tabs).CombinedOutput()
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	var data struct {
		Sockets []struct {
			Label string `json:"label"`
			Rows  []struct {
				Series string `json:"series"`
			} `json:"rows"`
		} `json:"sockets"`
	}
	b, err := os.ReadFile(filepath.Join(tabs, "tables.json"))
	if err != nil || json.Unmarshal(b, &data) != nil {
		t.Fatalf("tables.json: %v", err)
	}
	if len(data.Sockets) != cases || len(data.Sockets[0].Rows) != modes {
		t.Errorf("tables.json: %d cases", len(data.Sockets))
	}
	found, problems, shot := browse(t, browser, html, filepath.Join(tmp, "chromium"), `(() => {
		const n = s => document.querySelectorAll(s).length;
		return {
			bars: n("figure[id^='fig-test'] svg"), udpSweep: n("#fig-test1-throughput svg"), cpu: n("#fig-cpu svg"),
			caseTables: n("section[id^='tab-test']"), summaries: n("section[id^='tab-summary-case']"),
			coloured: n("td.better, td.worse, td.same"),
		};
	})()`, "#fig-test1-throughput")
	if found["bars"] < 20 || found["udpSweep"] != 1 || found["cpu"] != 1 || found["caseTables"] != cases || found["summaries"] != cases || found["coloured"] == 0 {
		t.Errorf("page: %v", found)
	}
	if len(problems) > 0 {
		t.Errorf("browser errors: %v", problems)
	}
	if len(shot) < 5000 {
		t.Errorf("screenshot of the sweep's bar chart is %d bytes: nothing drawn?", len(shot))
	}
}

// TestInterruptedSocketRun stops a long socket-workload run mid-cell: the run keeps
// what the client measured, says it was interrupted and leaves nothing.
func TestInterruptedSocketRun(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "long.yaml")
	if err := os.WriteFile(spec, []byte("name: long\nmodes: [bare, bridge]\ntests:\n  - {workload: stream, duration: 60s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	cmd := exec.Command(bin, "run", spec, "-o", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := poll.Until(context.Background(), 30*time.Second, 100*time.Millisecond, func() (bool, error) {
		b, _ := os.ReadFile(filepath.Join(dir, "samples.jsonl"))
		return bytes.Count(b, []byte(`"workload":"stream"`)) >= 3, nil
	})
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("no stream intervals within 30s\n%s", stderr.String())
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130\nstderr:\n%s", err, stderr.String())
	}
	assertNothingLeft(t, bin)
	m := readMeta(t, dir)
	recs, costs := readRecords(t, dir)
	if m.Status != "interrupted" || len(m.Cells) != 1 || len(recs) < 3 || len(costs) != 1 {
		t.Errorf("status %q, %d cells, %d records, %d cost lines", m.Status, len(m.Cells), len(recs), len(costs))
	}
}

// checkDockerEndpoints checks that each mode but bare ran on real engines
// and that the run recorded them: engine version, sandbox, and the network
// Docker made with its driver.
func checkDockerEndpoints(t *testing.T, m record.Meta) {
	t.Helper()
	wantDriver := map[string]string{"host": "", "bridge": "bridge", "macvlan": "macvlan", "overlay": "overlay"}
	for _, mm := range m.Modes {
		mode, _, _ := strings.Cut(mm.Mode, "@")
		if mm.Driver != "docker" || mm.Lab.Driver != "docker" {
			continue
		}
		for _, ep := range mm.Lab.Endpoints {
			if mode == "bare" {
				if ep.Docker != nil {
					t.Errorf("bare on the docker driver has a sandbox: %+v", ep.Docker)
				}
				continue
			}
			d := ep.Docker
			if d == nil || d.Version == "" || d.Sandbox == "" || !strings.HasPrefix(d.Image, "cnperf/workload:") {
				t.Errorf("%s on %s: docker endpoint %+v", mm.Mode, ep.Host, d)
				continue
			}
			got := ""
			if d.Network != nil {
				got = d.Network.Driver
			}
			if got != wantDriver[mode] {
				t.Errorf("%s on %s: network driver %q, want %q", mm.Mode, ep.Host, got, wantDriver[mode])
			}
		}
	}
}
