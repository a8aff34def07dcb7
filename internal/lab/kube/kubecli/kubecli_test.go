package kubecli

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/lab"
)

// TestPodBadFlagsExit2: what the driver runs in its pods refuses bad
// flags in one line and exit 2, as every command does: a probe that
// would busy-loop (--every 1ns), or a protocol bound cannot read (sctp),
// is no answer "no". Each probe case is refused before its first dial
// (before the fix, --every 1ns never returned).
func TestPodBadFlagsExit2(t *testing.T) {
	cat := lab.Catalog{Commands: func(v string, stdout, stderr io.Writer) []*cobra.Command { return Commands(v, stdout, stderr) }}
	pid := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		args []string
		want string // "" accepted, exit 0
	}{
		{[]string{"pod", "probe", "--addr", "127.0.0.1:1", "--every", "1ns"}, "--every 1ns: want 1ms to 1h0m0s"},
		{[]string{"pod", "probe", "--addr", "127.0.0.1:1", "--every", "0s"}, "--every 0s: want 1ms to 1h0m0s"},
		{[]string{"pod", "probe", "--addr", "127.0.0.1:1", "--every", "-1s"}, "--every -1s: want 1ms to 1h0m0s"},
		{[]string{"pod", "probe", "--addr", "127.0.0.1:1", "--every", "2h"}, "--every 2h0m0s: want 1ms to 1h0m0s"},
		{[]string{"pod", "probe", "--addr", "127.0.0.1:1", "--timeout", "1us"}, "--timeout 1µs: want 1ms to 1h0m0s"},
		{[]string{"pod", "probe", "--addr", "nowhere"}, `--addr "nowhere": want IP:PORT`},
		{[]string{"pod", "bound", "--pid", pid, "--port", "80", "--proto", "sctp"}, `--proto "sctp": want tcp or udp, comma-separated`},
		{[]string{"pod", "bound", "--pid", pid, "--port", "80", "--proto", "tcp,"}, `--proto "": want tcp or udp, comma-separated`},
		{[]string{"pod", "bound", "--pid", "0", "--port", "80"}, "--pid 0: want a process id"},
		{[]string{"pod", "bound", "--pid", pid, "--port", "0"}, "--port 0: want 1 to 65535"},
		{[]string{"pod", "bound", "--pid", pid, "--port", "1", "--proto", "tcp,udp"}, ""},
	} {
		var out, errb bytes.Buffer
		code := cli.Main(cat, tc.args, &out, &errb)
		msg := strings.TrimSpace(errb.String())
		switch {
		case tc.want == "" && (code != 0 || out.String() != "no\n"):
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0 and no", tc.args, code, out.String(), msg)
		case tc.want != "" && (code != 2 || msg != "cnperf: "+tc.want || out.Len() != 0):
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, msg, "cnperf: "+tc.want)
		}
	}
}
