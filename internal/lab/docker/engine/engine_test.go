package engine

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsable(t *testing.T) {
	static := filepath.Join(t.TempDir(), "static")
	build := exec.Command("go", "build", "-o", static, "./testdata/static")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build a static binary: %v\n%s", err, out)
	}
	dynamic, err := exec.LookPath("ls") // Debian's coreutils are dynamically linked
	if err != nil {
		t.Skip("no ls")
	}
	tests := []struct {
		name    string
		path    string // PATH while checking; "" keeps the machine's
		exe     string
		wantErr string // "" when it must be usable (and the engine is installed)
	}{
		{"no engine installed", t.TempDir(), static, "dockerd, containerd, runc, containerd-shim-runc-v2 not installed (apt-get install docker.io"},
		{"dynamic binary", "", dynamic, "is dynamically linked; build it with CGO_ENABLED=0"},
		{"static binary", "", static, ""},
		{"missing binary", "", filepath.Join(t.TempDir(), "nosuch"), "docker driver: read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path != "" {
				t.Setenv("PATH", tc.path)
			} else if Available() != nil {
				t.Skip("docker.io is not installed here")
			}
			err := Usable(tc.exe)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Usable: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Usable = %v, want an error containing %q", err, tc.wantErr)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestShimSockets(t *testing.T) {
	run := t.TempDir()
	write := func(ns, id, addr string) {
		d := filepath.Join(run, "containerd", "state", "io.containerd.runtime.v2.task", ns, id)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "address"), []byte(addr+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("cnperf-l-a", "c1", "unix:///run/containerd/s/abc")
	write("cnperf-l-b", "c2", "unix:///run/containerd/s/def")
	write("cnperf-l-b", "c3", "unix:///etc/passwd")               // never outside the shim directory
	write("cnperf-l-b", "c4", "unix:///run/containerd/s/../../x") // nor above it
	got := shimSockets(run)
	if strings.Join(got, ",") != "/run/containerd/s/abc,/run/containerd/s/def" {
		t.Fatalf("shimSockets = %v", got)
	}
}

// TestDaemonConfig: an engine's daemon.json is JSON with its key path,
// and turns experimental and ip6tables on exactly when the lab has IPv6.
func TestDaemonConfig(t *testing.T) {
	for _, ipv6 := range []bool{false, true} {
		var got map[string]any
		if err := json.Unmarshal(DaemonConfig(`/run/x "y"/key.json`, ipv6), &got); err != nil {
			t.Fatalf("ipv6 %v: %v", ipv6, err)
		}
		if got["deprecated-key-path"] != `/run/x "y"/key.json` {
			t.Errorf("ipv6 %v: key path %v", ipv6, got["deprecated-key-path"])
		}
		if on := got["ip6tables"] == true && got["experimental"] == true; on != ipv6 {
			t.Errorf("ipv6 %v: %v", ipv6, got)
		}
		if !ipv6 && len(got) != 1 {
			t.Errorf("an IPv4 lab's daemon.json has more than its key: %v", got)
		}
	}
}
