package namespace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// A namespace's name in Dir is a bind mount of its nsfs file. When Dir is a
// plain directory, the first `ip netns add` on the machine (iproute2, or a
// tool built on it: Docker, CNI plugins, scripts) turns it into a mount
// point: it bind-mounts Dir onto itself, recursively, and makes that
// shared. The new mount holds copies of the namespace mounts below it and
// hides the originals: unmounting the copy then leaves the original, its
// file cannot be removed ("device or resource busy"), and the namespace
// lives on with every link and bridge in it. Two things keep that from
// stranding a lab:
//
//   - setupDir does what iproute2 does first, so a later `ip netns add`
//     finds Dir already a mount point and mounts next to cnperf's;
//   - for names made before that (by an older cnperf or another tool), the
//     functions here find a mount hidden below Dir's top mount through the
//     lower mount itself (hidden.go's lowerDir), so a hidden namespace can
//     still be read, emptied and unmounted.

// setupDir makes Dir exist and, as iproute2's `ip netns add` does, a shared
// bind mount of itself, so that namespace mounts made later by anyone sit
// side by side in it rather than one tool's self-bind hiding another's.
// A Dir that is already a mount point is left as it is (someone made it,
// and a later self-bind would find it one). A plain Dir that already holds
// namespace mounts is left too: binding over it now would hide those, the
// very thing this guards against.
func setupDir() error {
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", Dir, err)
	}
	// The common case, cheaply: Dir is a mount point already (set up by
	// the first namespace), whatever the size of the mount table.
	if a, err := pathMountID(Dir); err == nil {
		if b, err := pathMountID(filepath.Dir(Dir)); err == nil && a != b {
			return nil
		}
	}
	ms, err := Mounts()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Point == Dir || strings.HasPrefix(m.Point, Dir+"/") {
			return nil
		}
	}
	if err := unix.Mount(Dir, Dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mount %s onto itself: %w", Dir, err)
	}
	if err := unix.Mount("", Dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s a shared mount: %w", Dir, err)
	}
	return nil
}

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	ID, Parent int
	Dev        string // major:minor
	Root       string // the mount's root inside its file system
	Point      string // where it is mounted
	FSType     string
}

// Mounts reads this process's mount table (its mount namespace's).
func Mounts() ([]Mount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mount table: %w", err)
	}
	return parseMountinfo(b), nil
}

// parseMountinfo reads /proc/PID/mountinfo (proc(5)): "ID PARENT MAJ:MIN
// ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS". Lines it
// cannot read are skipped: the kernel writes this file, and a line that
// does not fit is one cnperf has nothing to do with.
func parseMountinfo(b []byte) []Mount {
	var out []Mount
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 7 {
			continue
		}
		id, err1 := strconv.Atoi(f[0])
		parent, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(f) {
			continue
		}
		out = append(out, Mount{ID: id, Parent: parent, Dev: f[2], Root: unescapeMount(f[3]), Point: unescapeMount(f[4]), FSType: f[sep+1]})
	}
	return out
}

// unescapeMount undoes the kernel's octal escapes (\040 for a space, \011,
// \012, \134) in mountinfo paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// nsMountsAt returns the namespace (nsfs) mounts at path, in the table's
// order (older first).
func nsMountsAt(ms []Mount, path string) []Mount {
	var out []Mount
	for _, m := range ms {
		if m.Point == path && m.FSType == "nsfs" {
			out = append(out, m)
		}
	}
	return out
}

// mountID returns the ID of the mount fd is on, as mountinfo numbers it.
func mountID(fd int) (int, error) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &st); err != nil {
		return 0, err
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return 0, errors.New("kernel gives no mount ID")
	}
	return int(st.Mnt_id), nil
}

// pathMountID is mountID of what path names (following a mount on it).
func pathMountID(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	return mountID(fd)
}

// lowerDir opens Dir as the mount with ID parent sees it, below whatever
// is mounted on Dir since: it opens parent where it is mounted (which
// must not be covered itself) and decodes Dir's file handle there, which
// reaches the directory without crossing the mount on top of it. This
// works when the top mount is a bind of the same directory, as iproute2's
// self-bind is; anything else is refused, since a handle means nothing in
// another file system. The caller closes the descriptor (O_PATH).
func lowerDir(ms []Mount, parent int) (int, error) {
	var pm *Mount
	for i := range ms {
		if ms[i].ID == parent {
			pm = &ms[i]
		}
	}
	if pm == nil {
		return -1, fmt.Errorf("mount %d is not in the mount table", parent)
	}
	mfd, err := unix.Open(pm.Point, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0) // open_by_handle_at refuses an O_PATH descriptor
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", pm.Point, err)
	}
	defer unix.Close(mfd)
	if id, err := mountID(mfd); err != nil || id != parent {
		return -1, fmt.Errorf("the mount at %s that holds %s is covered by another", pm.Point, Dir)
	}
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, Dir, 0)
	if err != nil {
		return -1, fmt.Errorf("file handle of %s: %w", Dir, err)
	}
	fd, err := unix.OpenByHandleAt(mfd, h, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("open %s below its top mount: %w", Dir, err)
	}
	var got, want unix.Stat_t
	id, err := mountID(fd)
	if err == nil {
		err = unix.Fstat(fd, &got)
	}
	if err == nil {
		err = unix.Stat(Dir, &want)
	}
	if err != nil || id != parent || got.Dev != want.Dev || got.Ino != want.Ino {
		unix.Close(fd)
		return -1, fmt.Errorf("%s below its top mount is not the directory on top (the top mount is not a bind of it)", Dir)
	}
	return fd, nil
}

// hiddenPath returns a path that reaches the namespace mount m, hidden
// below Dir's top mount, through the lower mount's view of Dir
// (/proc/self/fd/N/NAME); close releases it.
func hiddenPath(ms []Mount, m Mount) (p string, close func(), err error) {
	dfd, err := lowerDir(ms, m.Parent)
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", dfd, filepath.Base(m.Point)), func() { unix.Close(dfd) }, nil
}

// open opens the named namespace: its file, or, when a later mount on Dir
// hides it, the hidden mount through the lower mount (the newest one, the
// one a process would have entered last).
func open(name string) (netns.NsHandle, error) {
	p := Path(name)
	h, err := netns.GetFromPath(p)
	if err != nil {
		return netns.None(), fmt.Errorf("open netns %s: %w", name, err)
	}
	if isNS(int(h)) || filepath.IsAbs(name) {
		return h, nil
	}
	h.Close()
	ms, err := Mounts()
	if err != nil {
		return netns.None(), fmt.Errorf("open netns %s: %w", name, err)
	}
	at := nsMountsAt(ms, p)
	if len(at) == 0 {
		return netns.None(), fmt.Errorf("open netns %s: %s is not a namespace", name, p)
	}
	hp, release, err := hiddenPath(ms, at[len(at)-1])
	if err != nil {
		return netns.None(), fmt.Errorf("open netns %s (hidden by a later mount on %s): %w", name, Dir, err)
	}
	defer release()
	h, err = netns.GetFromPath(hp)
	if err != nil {
		return netns.None(), fmt.Errorf("open netns %s (hidden by a later mount on %s): %w", name, Dir, err)
	}
	if !isNS(int(h)) {
		h.Close()
		return netns.None(), fmt.Errorf("open netns %s: %s is not a namespace", name, p)
	}
	return h, nil
}

func isNS(fd int) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(fd, &st) == nil && st.Type == unix.NSFS_MAGIC
}

// unmountAll unmounts every namespace mount at Path(name): the top one by
// its path, then those a later mount on Dir hides, through the lower
// mount. Only nsfs mounts are touched, and only at that one path.
func unmountAll(name string) error {
	p := Path(name)
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount netns %s: %w", name, err)
	}
	if filepath.IsAbs(name) {
		return nil
	}
	// Each round removes at least one mount or stops; a path holds only as
	// many mounts as tools stacked there, so the bound is never reached
	// in practice.
	for range 16 {
		ms, err := Mounts()
		if err != nil {
			return fmt.Errorf("unmount netns %s: %w", name, err)
		}
		at := nsMountsAt(ms, p)
		if len(at) == 0 {
			return nil
		}
		hp, release, err := hiddenPath(ms, at[len(at)-1])
		if err != nil {
			return fmt.Errorf("unmount netns %s, hidden by a later mount on %s: %w", name, Dir, err)
		}
		err = unix.Unmount(hp, unix.MNT_DETACH)
		release()
		if err != nil {
			return fmt.Errorf("unmount netns %s, hidden by a later mount on %s: %w", name, Dir, err)
		}
	}
	return fmt.Errorf("unmount netns %s: still mounted after 16 unmounts", name)
}
