package namespace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseMountinfo(t *testing.T) {
	in := []byte(`27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
63 27 0:4 net:[4026532178] /run/netns/cnperf-x-net rw - nsfs nsfs rw
67 27 254:0 /run/netns /run/netns rw,relatime shared:1 - ext4 /dev/vda rw
68 67 0:4 net:[4026532178] /run/netns/cnperf-x-net rw shared:2 master:3 - nsfs nsfs rw
80 27 0:50 / /mnt/with\040space rw - tmpfs tmpfs rw
81 27 0:51 / /mnt/bad\09 rw - tmpfs tmpfs rw
not a line
90 x 0:4 / /a rw - nsfs nsfs rw
91 27 0:4 / /b rw shared:1
`)
	want := []Mount{
		{ID: 27, Parent: 1, Dev: "254:0", Root: "/", Point: "/", FSType: "ext4"},
		{ID: 63, Parent: 27, Dev: "0:4", Root: "net:[4026532178]", Point: "/run/netns/cnperf-x-net", FSType: "nsfs"},
		{ID: 67, Parent: 27, Dev: "254:0", Root: "/run/netns", Point: "/run/netns", FSType: "ext4"},
		{ID: 68, Parent: 67, Dev: "0:4", Root: "net:[4026532178]", Point: "/run/netns/cnperf-x-net", FSType: "nsfs"},
		{ID: 80, Parent: 27, Dev: "0:50", Root: "/", Point: "/mnt/with space", FSType: "tmpfs"},
		{ID: 81, Parent: 27, Dev: "0:51", Root: "/", Point: `/mnt/bad\09`, FSType: "tmpfs"},
	}
	got := parseMountinfo(in)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseMountinfo:\n got %+v\nwant %+v", got, want)
	}
	at := nsMountsAt(got, "/run/netns/cnperf-x-net")
	if len(at) != 2 || at[0].ID != 63 || at[1].ID != 68 {
		t.Fatalf("nsMountsAt = %+v, want mounts 63 and 68", at)
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte("63 27 0:4 net:[1] /run/netns/a\\040b rw - nsfs nsfs rw\n"))
	f.Add([]byte("1 2 3 4 5 6 -\n\\"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms := parseMountinfo(b)
		if len(ms) > bytes.Count(b, []byte("\n"))+1 {
			t.Fatalf("%d entries from %d lines", len(ms), bytes.Count(b, []byte("\n"))+1)
		}
		for _, m := range ms {
			if m.FSType == "" || len(m.Point) > len(b) {
				t.Fatalf("entry without a file system type or a point longer than its line: %+v", m)
			}
		}
	})
}

// childEnv tells the test binary it runs as TestLaterIPNetnsAdd's child,
// in a mount namespace of its own, with the scenario to play.
const childEnv = "CNPERF_NETNSUTIL_MOUNT_SCENARIO"

// TestLaterIPNetnsAdd runs `ip netns add` in the middle of a namespace's
// life and has Delete remove it: when cnperf made it (Dir is set up as
// iproute2 sets it up, so nothing is hidden), and when someone made it
// before Dir was set up (iproute2's self-bind then hides it), with the
// copy on top still there or already unmounted. Each scenario runs in a
// child in a private mount namespace: it may unmount Dir there to start as
// a fresh machine does, and whatever it leaves dies with it.
func TestLaterIPNetnsAdd(t *testing.T) {
	if sc := os.Getenv(childEnv); sc != "" {
		playHidden(t, sc)
		return
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("integration test needs root and CI runs as root")
		}
		t.Skip("needs root (CAP_SYS_ADMIN)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip")
	}
	for _, sc := range []string{"set-up", "hidden", "hidden-uncovered"} {
		t.Run(sc, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestLaterIPNetnsAdd$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+sc)
			// Go makes / private in the child's new mount namespace
			// before exec: nothing it mounts or unmounts reaches ours.
			cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
			out, err := cmd.CombinedOutput()
			// The child's mounts died with its mount namespace; a child
			// that failed half-way leaves the empty files they were on.
			name, other := scenarioNames(os.Getpid())
			for _, n := range []string{name, other} {
				removeUnmounted(t, Path(n))
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

func playHidden(t *testing.T, sc string) {
	// Start as a fresh machine: Dir a plain directory with nothing mounted
	// in it. These are the test's own copies of the machine's mounts.
	for {
		ms, err := Mounts()
		if err != nil {
			t.Fatal(err)
		}
		var under []string
		for _, m := range ms {
			if m.Point == Dir || strings.HasPrefix(m.Point, Dir+"/") {
				under = append(under, m.Point)
			}
		}
		if len(under) == 0 {
			break
		}
		for i := len(under) - 1; i >= 0; i-- {
			if err := unix.Unmount(under[i], unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				t.Fatalf("unmount %s in the test's mount namespace: %v", under[i], err)
			}
		}
	}
	name, other := scenarioNames(os.Getppid())
	if sc == "set-up" {
		if err := Create(name, "cnperf:test"); err != nil {
			t.Fatal(err)
		}
	} else {
		// As a tool that does not set Dir up (an older cnperf) makes it.
		if err := os.MkdirAll(Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := create(name); err != nil {
			t.Fatal(err)
		}
	}
	ino, err := Inode(name)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "netns", "add", other).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", other, err, out)
	}
	defer func() {
		if out, err := exec.Command("ip", "netns", "del", other).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", other, err, out)
		}
	}()
	ms, err := Mounts()
	if err != nil {
		t.Fatal(err)
	}
	n := len(nsMountsAt(ms, Path(name)))
	switch sc {
	case "set-up":
		if n != 1 {
			t.Fatalf("%d mounts at %s after ip netns add, want 1: Dir was not set up as iproute2 sets it up", n, Path(name))
		}
	case "hidden", "hidden-uncovered":
		if n != 2 {
			t.Fatalf("%d mounts at %s after ip netns add, want 2 (the original hidden, a copy on top): the test no longer builds the hidden case", n, Path(name))
		}
	}
	if sc == "hidden-uncovered" {
		// What an earlier delete that stopped at "device or resource
		// busy" leaves: the copy gone, the original hidden.
		if err := unix.Unmount(Path(name), unix.MNT_DETACH); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Inode(name)
	if err != nil {
		t.Fatalf("namespace %s cannot be read after ip netns add: %v", name, err)
	}
	if got != ino {
		t.Fatalf("namespace %s read as inode %d after ip netns add, was %d", name, got, ino)
	}
	if err := Delete(name); err != nil {
		t.Fatalf("delete after ip netns add: %v", err)
	}
	if Exists(name) {
		t.Fatalf("%s still exists after Delete", Path(name))
	}
	ms, err = Mounts()
	if err != nil {
		t.Fatal(err)
	}
	if left := nsMountsAt(ms, Path(name)); len(left) > 0 {
		t.Fatalf("mounts left at %s after Delete: %+v", Path(name), left)
	}
	if _, err := Inode(other); err != nil {
		t.Fatalf("the other tool's namespace is gone: %v", err)
	}
}

// scenarioNames are the names a scenario child of the test process pid
// gives its namespace and the other tool's.
func scenarioNames(pid int) (name, other string) {
	return fmt.Sprintf("cnperf-nsutest-%d", pid), fmt.Sprintf("cnperf-test-%d", pid)
}

// removeUnmounted removes p when nothing is mounted on it here.
func removeUnmounted(t *testing.T, p string) {
	ms, err := Mounts()
	if err != nil {
		t.Error(err)
		return
	}
	if mountedAt(ms, p) {
		return
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Error(err)
	}
}

func mountedAt(ms []Mount, path string) bool {
	for _, m := range ms {
		if m.Point == path {
			return true
		}
	}
	return false
}

func TestUnescapeMount(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/run/cnperf/docker/a/s/exec/netns/default", "/run/cnperf/docker/a/s/exec/netns/default"},
		{`/var/lib/with\040space`, "/var/lib/with space"},
		{`/tab\011and\134backslash`, "/tab\tand\\backslash"},
		{`/trailing\04`, `/trailing\04`},
	}
	for _, tc := range tests {
		if got := unescapeMount(tc.in); got != tc.want {
			t.Errorf("unescapeMount(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
