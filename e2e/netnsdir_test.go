package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"
)

// TestLabDownAfterIPNetnsAdd runs `ip netns add` in the middle of a lab's
// life, as iproute2, Docker or a CNI plugin may do on the same machine, and
// takes the lab down: down succeeds and leaves neither the lab nor the
// other tool's namespace gone. It runs in a mount namespace of its own
// (Go makes its / private) that starts as a fresh machine does, with
// /run/netns a plain directory; every mount it makes dies with it.
func TestLabDownAfterIPNetnsAdd(t *testing.T) {
	testutil.RequireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip")
	}
	bin := testutil.Binary(t)
	name := fmt.Sprintf("e2ensadd%d", os.Getpid())
	other := fmt.Sprintf("cnperf-test-%d", os.Getpid())
	script := `set -u
# This mount namespace's copies of the machine's mounts under /run/netns go:
# the lab starts as on a machine where nothing made /run/netns a mount point.
while grep -q ' /run/netns' /proc/self/mountinfo; do
	awk '$5 ~ "^/run/netns(/|$)" {print $5}' /proc/self/mountinfo | sort -r | xargs -r umount -l
done
"$BIN" lab up "$NAME" --mode bare >/dev/null || { echo "lab up failed"; exit 10; }
ip netns add "$OTHER" || exit 11
"$BIN" lab down "$NAME"; down=$?
"$BIN" lab ls
echo "mounts left: $(grep -c "/run/netns/cnperf-$NAME-" /proc/self/mountinfo)"
ip netns pids "$OTHER" >/dev/null && echo "other alive"
ip netns del "$OTHER"
exit $down
`
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "BIN="+bin, "NAME="+name, "OTHER="+other)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	// The mounts died with the mount namespace; a script that stopped
	// half-way leaves the empty files they were on.
	files, _ := filepath.Glob("/run/netns/cnperf-" + name + "-*")
	for _, f := range append(files, "/run/netns/"+other) {
		if !mounted(t, f) {
			_ = os.Remove(f)
		}
	}
	if err != nil {
		t.Fatalf("lab down after ip netns add: %v\n%s", err, out)
	}
	// Nothing else is under /run/netns in this mount namespace: ls finds
	// no lab.
	for _, want := range []string{"removed lab " + name, "no labs", "mounts left: 0", "other alive"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("after lab down, no %q in:\n%s", want, out)
		}
	}
	if len(files) > 0 {
		t.Errorf("lab down left %v", files)
	}
}

// mounted reports whether something is mounted on path in this mount
// namespace.
func mounted(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return true
		}
	}
	return false
}
