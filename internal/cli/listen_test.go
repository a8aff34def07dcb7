package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
)

func TestListenAddr(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"127.0.0.1:80", "127.0.0.1:80", ""},
		{":5201", ":5201", ""},
		{"0.0.0.0:0", "0.0.0.0:0", ""},
		{"[::1]:9", "[::1]:9", ""},
		{"::1", "[::1]:4040", ""},
		{"[::1]", "[::1]:4040", ""},
		{"198.18.0.2", "198.18.0.2:4040", ""},
		{"localhost:1", "localhost:1", ""},
		{"nonsense", "", `--listen "nonsense": host "nonsense"`},
		{"example.com:80", "", `host "example.com"`},
		{"", "", `--listen "": want HOST:PORT`},
		{":", "", `port ""`},
		{":http", "", `port "http"`},
		{":65536", "", `port "65536"`},
		{":-1", "", `port "-1"`},
		{":080", "", `port "080"`},
		{"a:b:c", "", "want HOST:PORT"},
		{"1.2.3.4:5:6", "", "want HOST:PORT"},
		{"300.1.1.1:80", "", `host "300.1.1.1"`},
		{"127.0.0.1:80\nforged", "", `port "80\nforged"`},
	} {
		got, err := listenAddr(tc.in, 4040)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("listenAddr(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("listenAddr(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
		case err != nil && strings.ContainsAny(err.Error(), "\n\r"):
			t.Errorf("listenAddr(%q): error spans lines: %q", tc.in, err)
		}
	}
}

// TestServeListen: every server refuses a bad --listen as bad input (exit
// 2, one line naming it), and listens on loopback by default.
func TestServeListen(t *testing.T) {
	for _, srv := range []string{"pong", "ping", "stream", "rr", "udp"} {
		for _, bad := range []string{"nonsense", ":99999", "a:b:c", ""} {
			var out, errb bytes.Buffer
			code := Main(drivers.Catalog(), []string{"serve", srv, "--listen", bad}, &out, &errb)
			e := errb.String()
			if code != ExitUsage || !strings.HasPrefix(e, "cnperf: ") || strings.Count(e, "\n") != 1 || !strings.Contains(e, `--listen "`+bad+`"`) {
				t.Errorf("serve %s --listen %q: exit %d, stderr %q; want 2 and one line naming it", srv, bad, code, e)
			}
		}
		var out, errb bytes.Buffer
		if code := Main(drivers.Catalog(), []string{"serve", srv, "--help"}, &out, &errb); code != 0 {
			t.Fatalf("serve %s --help: exit %d", srv, code)
		}
		help := strings.Join(strings.Fields(out.String()), " ")
		if !strings.Contains(help, `(default "127.0.0.1:`) || !strings.Contains(help, "loopback by default") || !strings.Contains(help, "no authentication") {
			t.Errorf("serve %s --help does not say it listens on loopback by default:\n%s", srv, out.String())
		}
	}
}
