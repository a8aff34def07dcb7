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

	"github.com/cnperf/cnperf/internal/record"
)

// TestRecordEnd: the run's end reaches run.json; when it cannot (a full
// disk, here a directory gone), stderr says the run's status stays
// running, and so does the metadata the command prints from.
func TestRecordEnd(t *testing.T) {
	boom := errors.New("mode bare: ping server exited")
	tests := []struct {
		name       string
		runErr     error
		gone       bool   // run.json cannot be written
		wantStatus string // in run.json and in meta
		wantErr    string
		wantOut    string
	}{
		{"complete", nil, false, "complete", "", ""},
		{"failed", boom, false, "failed", boom.Error(), ""},
		{"interrupted", fmt.Errorf("cell 3: %w", context.Canceled), false, "interrupted", "canceled", ""},
		{"cannot write, run fine", nil, true, "running", "write run.json", "the run ended complete, but write run.json"},
		{"cannot write, run failed", boom, true, "running", boom.Error(), "the run ended failed, but write run.json"},
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
			var out bytes.Buffer
			err = recordEnd(run, meta, tc.runErr, &out)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if got := out.String(); !strings.Contains(got, tc.wantOut) || strings.Count(got, "\n") > 1 || (tc.wantOut == "") != (got == "") {
				t.Errorf("told %q, want one line with %q", got, tc.wantOut)
			}
			if tc.gone && !strings.Contains(out.String(), "keeps status running") {
				t.Errorf("told %q: not that run.json keeps status running", out.String())
			}
			if meta.Status != tc.wantStatus {
				t.Errorf("meta status %q, want %q", meta.Status, tc.wantStatus)
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
