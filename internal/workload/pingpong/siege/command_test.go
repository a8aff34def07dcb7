package siege

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
)

// TestCommandEnvelope: --format envelope prints a start line with the
// settings, one interval line per request holding the sample's fields, and
// an end line with the counts, every line an envelope.
func TestCommandEnvelope(t *testing.T) {
	pingURL, _ := pingPong(t, 1000)
	var out, errb bytes.Buffer
	cmd := Command(workload.Console{Stdout: &out, Stderr: &errb})
	cmd.SetArgs([]string{"--target", pingURL, "--sizes", "3,10,0", "--repetitions", "2", "--format", "envelope", "--experiment", "x"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err != nil {
		t.Fatalf("siege: %v (%s)", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+6+1 {
		t.Fatalf("%d lines, want start, 6 intervals, end:\n%s", len(lines), out.String())
	}
	for i, line := range lines {
		env, err := workload.Decode([]byte(line))
		want := workload.KindInterval
		switch i {
		case 0:
			want = workload.KindStart
		case len(lines) - 1:
			want = workload.KindEnd
		}
		if err != nil || env.Workload != "pingpong" || env.Kind != want {
			t.Fatalf("line %d %s: %+v, %v; want a pingpong %s line", i, line, env, err, want)
		}
		switch want {
		case workload.KindStart:
			var st workload.Start
			if err := json.Unmarshal([]byte(line), &st); err != nil || st.Server != pingURL || st.Settings["sizes"] != "3,10,0" {
				t.Errorf("start %s: want server %s and the settings", line, pingURL)
			}
		case workload.KindInterval:
			var s record.Sample
			if err := json.Unmarshal([]byte(line), &s); err != nil || !s.OK() || s.Mode != "x" {
				t.Errorf("interval %s: want a whole sample of mode x", line)
			}
		case workload.KindEnd:
			var end End
			err := json.Unmarshal([]byte(line), &end)
			tcp, servers := end.TCP, end.Servers
			if err != nil || end.Requests != 6 || end.Sizes != 3 || end.Failed != 0 || end.Interrupted {
				t.Errorf("end %s: want 6 requests over 3 sizes, none failed", line)
			}
			if tcp == nil || tcp.Connections < 1 || tcp.Retransmits != 0 {
				t.Errorf("end %s: want siege's connections' TCP_INFO", line)
			}
			// This ping books its connections to pong, not those it
			// accepts (no Answers book), and this pong books none.
			if r := servers[SideRelay]; r == nil || r.Connections < 1 || len(servers) != 1 {
				t.Errorf("end %s: want ping's connections to pong, alone", line)
			}
		}
	}
}
