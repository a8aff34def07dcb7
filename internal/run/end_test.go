package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// TestWriteEnd: the run's end reaches run.json; when it cannot (a full
// disk, here a directory gone), stderr says the run's status stays
// running, and so does the metadata the command prints from.
func TestWriteEnd(t *testing.T) {
	boom := errors.New("mode bare: ping server exited")
	tests := []struct {
		name       string
		status     string // as finish sets it
		runErr     error
		gone       bool   // run.json cannot be written
		wantStatus string // in run.json and in meta
		wantErr    string
		wantOut    string
	}{
		{"complete", "complete", nil, false, "complete", "", ""},
		{"failed", "failed", boom, false, "failed", boom.Error(), ""},
		{"interrupted", "interrupted", fmt.Errorf("cell 3: %w", context.Canceled), false, "interrupted", "canceled", ""},
		{"cannot write, run fine", "complete", nil, true, "running", "write run.json", "the run ended complete, but write run.json"},
		{"cannot write, run failed", "failed", boom, true, "running", boom.Error(), "the run ended failed, but write run.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			run, err := record.Create(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			meta := &record.Meta{Format: 1, Status: "running"}
			if err := run.WriteMeta(meta); err != nil {
				t.Fatal(err)
			}
			if tc.gone {
				// What a full disk does to the temporary file run.json is
				// written through: it cannot be made.
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			}
			now := time.Now()
			meta.Status, meta.Finished = tc.status, &now
			var out bytes.Buffer
			err = writeEnd(run, meta, tc.runErr, &out)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if got := out.String(); !strings.Contains(got, tc.wantOut) || strings.Count(got, "\n") > 1 || (tc.wantOut == "") != (got == "") {
				t.Errorf("told %q, want one line with %q", got, tc.wantOut)
			}
			if tc.gone && !strings.Contains(out.String(), "keeps status running") {
				t.Errorf("told %q: not that run.json keeps status running", out.String())
			}
			if meta.Status != tc.wantStatus || (tc.gone && meta.Finished != nil) {
				t.Errorf("meta status %q, finished %v; want %q", meta.Status, meta.Finished, tc.wantStatus)
			}
			if tc.gone {
				return
			}
			rd, err := record.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			var back record.Meta
			if err := rd.Meta(&back); err != nil {
				t.Fatal(err)
			}
			if back.Status != tc.wantStatus || back.Finished == nil {
				t.Errorf("run.json: status %q, finished %v; want %q and a time", back.Status, back.Finished, tc.wantStatus)
			}
		})
	}
}

// TestNothingMeasured: a run whose every cell failed failed, though no
// step of it did; one cell that measured keeps it complete.
func TestNothingMeasured(t *testing.T) {
	ok := record.Cell{Samples: 40}
	someFailed := record.Cell{Samples: 40, Failed: 3}
	allFailed := record.Cell{Samples: 40, Failed: 40}
	died := record.Cell{Error: "ping server exited", Failed: 1}
	clientFailed := record.Cell{Error: "client: exit status 1", Samples: 2, Failed: 1}
	tests := []struct {
		name  string
		cells []record.Cell
		want  string // "" measured
	}{
		{"no cells (stopped before any)", nil, ""},
		{"every cell measured", []record.Cell{ok, ok}, ""},
		{"some requests failed", []record.Cell{someFailed}, ""},
		{"one cell of many measured", []record.Cell{died, allFailed, ok}, ""},
		{"every request failed", []record.Cell{allFailed, allFailed}, "nothing was measured: every request of the 2 cells failed"},
		{"every cell failed", []record.Cell{allFailed, died, clientFailed}, "nothing was measured: all 3 cells failed (the first: ping server exited)"},
		{"a cell with lines that failed", []record.Cell{clientFailed}, "nothing was measured: the one cell failed: client: exit status 1"},
		{"the one cell's requests failed", []record.Cell{allFailed}, "nothing was measured: every request of the one cell failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := nothingMeasured(tc.cells)
			if (tc.want == "") != (err == nil) || err != nil && err.Error() != tc.want {
				t.Errorf("nothingMeasured = %v, want %q", err, tc.want)
			}
		})
	}
}
