package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileBadInput: what `cnperf import` refuses before it reads a row,
// in the words of its flags.
func TestFileBadInput(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"unknown format", func() error { _, _, err := ReaderFor("csv"); return err }(), `--format "csv": want ppbench or ab`},
		{"no -o", ValidateOut(""), "give the run directory to create with -o DIR"},
		{"-o not empty", ValidateOut(full), "-o " + full + ": directory is not empty"},
		{"window too small", ValidateWindow(MinReceiveWindow - 1), "--receive-window 1023: must be in 1024..1073741824 bytes"},
		{"window too large", ValidateWindow(MaxReceiveWindow + 1), "--receive-window 1073741825"},
		{"not a file", func() error { _, _, err := ReadFile(full, PPBench); return err }(), full},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one with %q", tc.name, tc.err, tc.want)
		}
	}
	for _, ok := range []error{ValidateOut(filepath.Join(full, "new")), ValidateOut(t.TempDir()), ValidateWindow(87380)} {
		if ok != nil {
			t.Errorf("refused good input: %v", ok)
		}
	}
	if name, _, err := ReaderFor("ab"); name != "apachebench" || err != nil {
		t.Errorf(`ReaderFor("ab") = %q, %v; want "apachebench"`, name, err)
	}
}

// TestProblems: the skipped rows listed are capped, the notes never.
func TestProblems(t *testing.T) {
	var in Info
	for i := range MaxListedSkips + 5 {
		in.skip(i+2, "bad %d", i)
	}
	in.Notes = []string{"a note"}
	got := in.Problems("f.csv")
	if len(got) != MaxListedSkips+2 || got[0] != "f.csv:2: bad 0: skipped" ||
		got[MaxListedSkips] != "f.csv: further skipped rows not listed" || got[len(got)-1] != "f.csv: a note" {
		t.Errorf("Problems = %q", got)
	}
}
