package record

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStacksRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, StacksFile(42))
	want := Stacks{
		"server;main;net_rx_action_[k]": 7,
		"idle;do_idle_[k]":              3,
		"daemon:flanneld;[unknown]":     1,
		"client;" + TruncatedFrame:      2,
	}
	if err := WriteStacks(path, want); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, "stacks/00042.folded.gz") {
		t.Errorf("path %s", path)
	}
	got, err := ReadStacks(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d", k, got[k], v)
		}
	}
	if Context("daemon:flanneld;x") != "daemon:flanneld" || Context("idle") != "idle" {
		t.Error("Context")
	}
}

func TestReadStacksRefuses(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no count", "server;a\n", "line 1"},
		{"zero", "server;a 0\n", "count"},
		{"huge", "server;a 99999999999999999\n", "count"},
		{"empty frame", "server;;a 1\n", "empty"},
		{"repeated", "server;a 1\nserver;a 2\n", "repeated"},
		{"tab", "server;a\tb 1\n", "blank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.folded.gz")
			writeGz(t, path, tc.text)
			_, err := ReadStacks(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(path, []byte("server;a 1\n"), 0o644)
	if _, err := ReadStacks(path); err == nil {
		t.Error("a file that is not gzip was read")
	}
}

func writeGz(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(text))
	zw.Close()
	f.Close()
}

func FuzzReadStacks(f *testing.F) {
	f.Add([]byte("server;a;b_[k] 3\nidle 1\n"))
	f.Add([]byte("x 0\n"))
	f.Add([]byte(";; 1\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		path := filepath.Join(t.TempDir(), "s.folded.gz")
		writeGz(t, path, string(text))
		s, err := ReadStacks(path)
		if err != nil {
			return
		}
		if len(s) > MaxStacks {
			t.Fatalf("%d stacks", len(s))
		}
		out := filepath.Join(t.TempDir(), "o.folded.gz")
		if err := WriteStacks(out, s); err != nil {
			t.Fatal(err)
		}
		back, err := ReadStacks(out)
		if err != nil || len(back) != len(s) {
			t.Fatalf("round trip: %v, %d of %d", err, len(back), len(s))
		}
	})
}
