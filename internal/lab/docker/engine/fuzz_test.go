package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzNoted: whatever a lab's run dir holds as an engine's note (a file a
// crash, a user or a disk may have damaged), noted answers or refuses in
// one line, and never points a tcp:// engine at TLS it did not note.
func FuzzNoted(f *testing.F) {
	for _, s := range []string{
		"tcp://10.0.0.2:2375",
		`tcp://10.0.0.2:2376 {"ca":"/c.pem","cert":"c.pem","key":"k.pem"}`,
		`tcp://10.0.0.2:2376 {"skip_verify":true}`,
		"unix:///run/docker.sock", "ssh://me@h:22", "ctx", "", " ", `tcp://x:1 {"ca":`, "tcp://x:1 null", "tcp://x:1 []",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		tg, err := noted(line)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(line, "\n") {
				t.Fatalf("noted(%q): a multi-line error %q", line, err)
			}
			return
		}
		_, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		if tg.Scheme == "tcp" && rest == "" && tg.TLS != nil {
			t.Fatalf("noted(%q) = TLS %+v: none was noted", line, tg.TLS)
		}
	})
}

// FuzzReadContext: a docker context's meta.json, whatever it holds, gives
// an engine URL or an error, never a panic.
func FuzzReadContext(f *testing.F) {
	for _, s := range []string{
		`{"Name":"c","Endpoints":{"docker":{"Host":"tcp://10.0.0.2:2376","SkipTLSVerify":true}}}`,
		`{"Name":"c","Endpoints":{"docker":{"Host":"ssh://me@h"}}}`,
		`{"Name":"other"}`, `{}`, `null`, `[]`, `{"Name":"c","Endpoints":{"docker":null}}`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, meta []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "contexts", "meta", contextDigest("c"), "meta.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, meta, 0o600); err != nil {
			t.Fatal(err)
		}
		_, tls, err := readContext(dir, "c")
		if err == nil && tls != nil && !tls.SkipVerify {
			t.Fatalf("TLS %+v from a context without TLS files", tls)
		}
	})
}
