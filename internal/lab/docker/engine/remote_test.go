package engine

import (
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	cfg := t.TempDir()
	meta := filepath.Join(cfg, "contexts", "meta", contextDigest("lab2"))
	if err := os.MkdirAll(meta, 0o700); err != nil {
		t.Fatal(err)
	}
	doc := `{"Name":"lab2","Endpoints":{"docker":{"Host":"tcp://198.18.0.7:2376"}}}`
	if err := os.WriteFile(filepath.Join(meta, "meta.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfg)
	tests := []struct {
		url, addr, wantErr string
	}{
		{"tcp://198.18.0.2:2375", "198.18.0.2", ""},
		{"ssh://me@pong.example:2222", "pong.example", ""},
		{"lab2", "198.18.0.7", ""},
		{"nosuch", "", "docker context nosuch: not found"},
		{"tcp://198.18.0.2", "", "want tcp://HOST:PORT"},
		{"unix:///var/run/docker.sock", "", "use --docker-host"},
		{"http://x:1", "", "want tcp://HOST:PORT, ssh://"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			got, err := Resolve(tc.url, nil, os.Getenv)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Resolve: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Resolve = %v, want an error containing %q", err, tc.wantErr)
			case tc.wantErr == "" && (got.Addr != tc.addr || got.URL != tc.url):
				t.Fatalf("Resolve = %+v, want address %s and URL %s", got, tc.addr, tc.url)
			}
		})
	}
}

func TestSSHArgv(t *testing.T) {
	tests := []struct{ url, want string }{
		{"ssh://me@pong.example:2222", "ssh -o BatchMode=yes -p 2222 -- me@pong.example docker system dial-stdio"},
		{"ssh://pong", "ssh -o BatchMode=yes -- pong docker system dial-stdio"},
	}
	for _, tc := range tests {
		tg, err := Resolve(tc.url, nil, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(tg.URL)
		if got := strings.Join(sshArgv(u), " "); got != tc.want {
			t.Errorf("sshArgv(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

// TestCommandConn: a command's standard streams carry a connection both
// ways, and closing it ends the command.
func TestCommandConn(t *testing.T) {
	c, err := dialCommand(context.Background(), []string{"cat"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*commandConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "ping" {
		t.Fatalf("read %q, %v; want the bytes written", got, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c.(*commandConn).cmd.ProcessState == nil {
		t.Error("the command still runs after Close")
	}
}
