package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
)

func TestMachineCompare(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", `{"kind":"cnperf-machine-profile","format":1,"features":{"threads":4,"network":1e10}}`)
	b := write("b.json", `{"kind":"cnperf-machine-profile","format":1,"features":{"threads":2,"network":1e10}}`)
	v2 := write("v2.json", `{"kind":"cnperf-machine-profile","format":2,"features":{"threads":2}}`)

	var out, errOut bytes.Buffer
	if code := Main(drivers.Catalog(), []string{"machine", "compare", a, a, b, "--json"}, &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		Matrix [][]float64 `json:"similarity"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Matrix[0][1] != 1 || got.Matrix[0][0] != 1 || got.Matrix[0][2] != 1-0.25/2 {
		t.Errorf("matrix = %v", got.Matrix)
	}

	out.Reset()
	errOut.Reset()
	if code := Main(drivers.Catalog(), []string{"machine", "compare", a, v2}, &out, &errOut); code != ExitUsage {
		t.Errorf("a profile of format 2: exit %d, want %d", code, ExitUsage)
	}
	if msg := errOut.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "format 2") || !strings.Contains(msg, "v2.json") {
		t.Errorf("stderr = %q, want one line naming the file and its format", msg)
	}
}
