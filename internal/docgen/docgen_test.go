package docgen

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/workload"
)

var update = flag.Bool("update", false, "rewrite the docs' generated regions from the declarations")

// TestDocsMatchDeclarations: every generated region of README.md and
// docs/*.md is what the declarations render now, and every region the
// declarations call for (each socket workload's parameters, the
// conditions) is in some doc.
func TestDocsMatchDeclarations(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, f := range append(files, "../../README.md") {
		name := strings.TrimPrefix(f, "../../")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, regions, err := Update(string(b), "../..")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, r := range regions {
			if other, ok := seen[r]; ok {
				t.Errorf("%s: region %q is also in %s: keep one, link to it", name, r, other)
			}
			seen[r] = name
		}
		if got == string(b) {
			continue
		}
		if *update {
			if err := os.WriteFile(f, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: regenerated", name)
			continue
		}
		t.Errorf("%s: a generated table differs from the declarations (%s); regenerate with: go test ./internal/docgen -update",
			name, firstDiff(string(b), got))
	}
	for _, r := range Regions() {
		if _, ok := seen[r]; !ok {
			t.Errorf("no doc has the region %q: add its markers (<!-- generated: %s --> and %s) where its table belongs, then go test ./internal/docgen -update", r, r, End)
		}
	}
}

// firstDiff names the first line where have and want differ.
func firstDiff(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := range min(len(h), len(w)) {
		if h[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ": has " + clip(h[i]) + ", the declarations give " + clip(w[i])
		}
	}
	return "line " + strconv.Itoa(min(len(h), len(w))+1) + ": lines added or removed"
}

func clip(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return "`" + s + "`"
}

func TestUpdate(t *testing.T) {
	table, err := Render("conditions", "../..")
	if err != nil {
		t.Fatal(err)
	}
	region := "<!-- generated: conditions -->\n\n" + strings.TrimSuffix(table, "\n") + "\n\n" + End
	for _, tc := range []struct {
		name, in, want, err string
		regions             []string
	}{
		{"no region", "# x\ntext\n", "# x\ntext\n", "", nil},
		{"stale region", "a\n<!-- generated: conditions -->\n| old |\n" + End + "\nb\n", "a\n" + region + "\nb\n", "", []string{"conditions"}},
		{"current region", "a\n" + region + "\n", "a\n" + region + "\n", "", []string{"conditions"}},
		{"empty region", "<!-- generated: conditions -->\n" + End, region, "", []string{"conditions"}},
		{"unclosed", "<!-- generated: conditions -->\n| old |\n", "", "line 1: \"conditions\" has no " + End, nil},
		{"stray end", "x\n" + End + "\n", "", "line 2: " + End + " without a region", nil},
		{"nested", "<!-- generated: conditions -->\n<!-- generated: conditions -->\n" + End, "", "line 2: a region inside", nil},
		{"unknown region", "<!-- generated: flowers -->\n" + End, "", "line 1: \"flowers\": not a region", nil},
		{"unknown workload", "<!-- generated: workload-params nosuch -->\n" + End, "", "line 1: workload-params nosuch: no such socket workload", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, regions, err := Update(tc.in, "../..")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if !slices.Equal(regions, tc.regions) {
				t.Errorf("regions %q, want %q", regions, tc.regions)
			}
		})
	}
}

func TestParamTable(t *testing.T) {
	ps := []workload.Param{
		{Name: "protocol", Kind: workload.Choice, Choices: []string{"tcp", "udp"}, Flag: "--udp", Short: "u", FlagSets: "udp", Help: "UDP instead of TCP"},
		{Name: "length", Kind: workload.Whole, Unit: "bytes", Bounds: []workload.Bound{
			{Protocol: "udp", Min: 24, Max: 65507, What: "UDP datagram"}, {Min: 1, Max: 16 << 20, What: "TCP write"}},
			Flag: "--length", Short: "l", Sweep: true, Help: "write size | datagram"},
		{Name: "count", Kind: workload.Whole, Unit: "packets", Bounds: []workload.Bound{{Max: 1_000_000_000}}, Flag: "--count", Default: "0", Help: "packets"},
		{Name: "omit", Kind: workload.Duration, Bounds: []workload.Bound{{Max: int64(workload.MaxDuration)}}, Flag: "--omit", Default: "0s", Help: "warm-up"},
		{Name: "rate", Kind: workload.Rate, Unit: "bits/s", Flag: "--bitrate", Short: "b", Default: "10M", Sweep: true, Help: "rate"},
		{Name: "fit", Kind: workload.Switch, Help: "fit the MTU"},
	}
	got, err := ParamTable(ps)
	if err != nil {
		t.Fatal(err)
	}
	want := "| field | takes | bounds | default | client flag | sweep | meaning |\n|---|---|---|---|---|---|---|\n" +
		"| `protocol` | `tcp`, `udp` |  | `tcp` | `--udp`, `-u` (sets udp) |  | UDP instead of TCP |\n" +
		"| `length` | bytes | udp: 24..65507 (UDP datagram); else 1..16 MiB (TCP write) | – | `--length`, `-l` | yes | write size \\| datagram |\n" +
		"| `count` | packets | 0..1,000,000,000 | `0` | `--count` |  | packets |\n" +
		"| `omit` | duration | 0s..24h | `0s` | `--omit` |  | warm-up |\n" +
		"| `rate` | bits/s: k, M, G, T | 0..1T | `10M` | `--bitrate`, `-b` | yes | rate |\n" +
		"| `fit` | `true`, `false` |  | – | (the runner) |  | fit the MTU |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := ParamTable([]workload.Param{{Name: "x", Kind: workload.Switch}}); err == nil || !strings.Contains(err.Error(), "parameter x: no Help") {
		t.Errorf("a parameter without help: error %v", err)
	}
}

func TestConditionTable(t *testing.T) {
	got := ConditionTable([]conditions.Field{{Name: "mtu", Values: "576..9000", Meaning: "a | b"}})
	want := "| condition | takes | what it does |\n|---|---|---|\n| `mtu` | 576..9000 | a \\| b |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
