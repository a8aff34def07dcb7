// Package namespace creates, enters and deletes named network namespaces the
// way iproute2 does (a bind mount under /run/netns), so that `ip netns` sees
// them too.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Dir is where named namespaces are bind-mounted (iproute2's convention).
const Dir = "/run/netns"

// Path returns the bind-mount path of the named namespace. An absolute
// path (e.g. /proc/PID/ns/net of a Docker container) is taken as it is, so
// every function here also works on namespaces cnperf did not name.
func Path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(Dir, name)
}

// Exists reports whether the named namespace exists.
func Exists(name string) bool {
	_, err := os.Stat(Path(name))
	return err == nil
}

// Create makes a new named network namespace with its loopback up and
// mark as its loopback's alias (none when empty): the mark says whose the
// namespace is, so that clean-up selects by it and not by a name alone. It
// fails if the name is taken.
func Create(name, mark string) error {
	if err := setupDir(); err != nil {
		return fmt.Errorf("create netns %s: %w", name, err)
	}
	if err := create(name); err != nil {
		return err
	}
	return Do(name, func() error {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return fmt.Errorf("find lo in %s: %w", name, err)
		}
		if mark != "" {
			if err := netlink.LinkSetAlias(lo, mark); err != nil {
				return fmt.Errorf("mark lo in %s: %w", name, err)
			}
		}
		if err := netlink.LinkSetUp(lo); err != nil {
			return fmt.Errorf("set lo up in %s: %w", name, err)
		}
		return quietIPv6(name)
	})
}

// create makes the namespace and its bind mount in Dir, as it is.
func create(name string) error {
	// netns.NewNamed switches the calling thread into the new namespace.
	return onThread("restore netns after creating "+name, func() error {
		h, err := netns.NewNamed(name)
		if err != nil {
			return fmt.Errorf("create netns %s: %w", name, err)
		}
		h.Close()
		return nil
	})
}

// quietIPv6 turns IPv6 off for the devices a namespace will get (those
// created in it or moved into it take the namespace's defaults). Labs
// address only IPv4 (198.18.0.0/15), and each device that comes up with
// IPv6 sends router solicitations, neighbour discovery and MLD reports;
// on an overlay those multicasts are copied to every other host, so a lab
// of n hosts sends n² of them while it is built and adds them to what it
// measures. A kernel built without IPv6 has nothing to turn off.
func quietIPv6(name string) error {
	for _, key := range []string{"all", "default"} {
		p := "/proc/sys/net/ipv6/conf/" + key + "/disable_ipv6"
		err := os.WriteFile(p, []byte("1"), 0o644)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("turn IPv6 off in %s: %w", name, err)
		}
	}
	return nil
}

// EnableIPv6 turns IPv6 on in the namespace name (quietIPv6 turned it
// off at Create) for a lab that carries it, quietly: the devices it will
// get (created in it or moved into it after this call) accept no router
// advertisements, send no router solicitations, run no duplicate address
// detection (every address is the plan's, unique by construction) and
// generate no link-local address, so they send nothing of their own but
// the MLD reports that joining an address's solicited-node group costs.
// Neighbour discovery works with global addresses alone for a namespace's
// own traffic; one that forwards needs a link-local address on each device
// it forwards out of, to solicit with (lab.LinkLocal6), which the mode
// adds. Call it right after Create: devices already there keep what they
// had (lo gets ::1 back).
func EnableIPv6(name string) error {
	return Do(name, func() error {
		conf := "/proc/sys/net/ipv6/conf/"
		if _, err := os.Stat(conf); err != nil {
			return fmt.Errorf("turn IPv6 on in %s: the kernel has no IPv6: %w", name, err)
		}
		var writes [][2]string // key under conf, value; in this order
		for _, dev := range []string{"default", "all"} {
			for _, kv := range [][2]string{{"accept_ra", "0"}, {"router_solicitations", "0"}, {"accept_dad", "0"}, {"dad_transmits", "0"}} {
				writes = append(writes, [2]string{dev + "/" + kv[0], kv[1]})
			}
		}
		writes = append(writes, [2]string{"default/addr_gen_mode", "1"}, [2]string{"default/disable_ipv6", "0"}, [2]string{"all/disable_ipv6", "0"})
		for _, w := range writes {
			if err := os.WriteFile(conf+w[0], []byte(w[1]), 0o644); err != nil {
				return fmt.Errorf("turn IPv6 on in %s: %s=%s: %w", name, w[0], w[1], err)
			}
		}
		return nil
	})
}

// Mark returns the mark Create gave the named namespace ("" if none).
func Mark(name string) (mark string, err error) {
	return mark, WithLink(name, "", "lo", func(_ *netlink.Handle, lo netlink.Link) error {
		mark = lo.Attrs().Alias
		return nil
	})
}

// Delete removes the named namespace, also when a later mount on Dir hides
// its mount (mounts.go). Deleting one that does not exist is not an error,
// so teardown can be repeated.
func Delete(name string) error {
	p := Path(name)
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := unmountAll(name); err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove netns %s: %w", name, err)
	}
	return nil
}

// List returns the names of the named namespaces that start with prefix, sorted.
func List(prefix string) ([]string, error) {
	entries, err := os.ReadDir(Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", Dir, err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Do runs fn with the calling OS thread inside the named namespace, as the
// CNI plugins' ns.Do does: on a fresh goroutine locked to its thread, so that
// nothing else ever runs in the wrong namespace. Sockets opened and processes
// started inside fn belong to that namespace.
func Do(name string, fn func() error) error {
	target, err := open(name)
	if err != nil {
		return err
	}
	defer target.Close()
	return onThread("leave netns "+name, func() error {
		if err := netns.Set(target); err != nil {
			return fmt.Errorf("enter netns %s: %w", name, err)
		}
		return fn()
	})
}

// onThread runs fn, which may switch its thread's namespace, on a fresh
// goroutine locked to its thread, and puts the thread back into the
// namespace it started in; leave names that step in its error. A thread
// that cannot be put back stays locked and is thrown away with its
// goroutine.
func onThread(leave string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("read current netns: %w", err)
			return
		}
		defer orig.Close()
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- fmt.Errorf("%s: %w", leave, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Handle returns a netlink handle bound to the named namespace
// (vishvananda/netlink's NewHandleAt), for link and address work without
// switching threads.
func Handle(name string) (*netlink.Handle, error) {
	ns, err := open(name)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink handle in %s: %w", name, err)
	}
	return h, nil
}

// WithLink runs fn with a netlink handle in the named namespace and its
// device dev; what says what dev is in the error when it is missing
// ("macvlan ", or "").
func WithLink(name, what, dev string, fn func(*netlink.Handle, netlink.Link) error) error {
	h, err := Handle(name)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("find %s%s in %s: %w", what, dev, name, err)
	}
	return fn(h, l)
}

// Inode returns the namespace's inode number, which /proc/PID/ns/net of every
// process inside it shares: the way to find those processes again.
func Inode(name string) (uint64, error) {
	h, err := open(name)
	if err != nil {
		return 0, err
	}
	defer h.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(h), &st); err != nil {
		return 0, fmt.Errorf("stat netns %s: %w", name, err)
	}
	return st.Ino, nil
}

// Fd opens the namespace and returns its file descriptor; the caller closes it.
func Fd(name string) (int, error) {
	h, err := open(name)
	if err != nil {
		return -1, err
	}
	return int(h), nil
}

// Pids returns the processes whose network namespace is the named one,
// found through /proc/PID/ns/net: the processes cnperf started inside a lab.
func Pids(name string) ([]int, error) {
	ino, err := Inode(name)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid := 0
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid <= 0 {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(fmt.Sprintf("/proc/%d/ns/net", pid), &st) != nil {
			continue // gone, or a kernel thread
		}
		if st.Ino == ino {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// DialFunc dials like net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer returns a dial function whose sockets are created inside the named
// namespace; once connected, a socket works from any thread.
func Dialer(name string) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := Do(name, func() error {
			var err error
			c, err = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}

// Bound reports whether the network namespace of pid has a socket on port
// for every protocol (TCP listening, UDP bound; IPv4 or dual-stack IPv6),
// from /proc/PID/net.
func Bound(pid, port int, protocols []string) bool {
	for _, proto := range protocols {
		found := false
		for _, table := range []string{proto, proto + "6"} {
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "net", table))
			found = found || (err == nil && hasPort(b, port, proto == "tcp"))
		}
		if !found {
			return false
		}
	}
	return true
}

// hasPort scans a /proc/net/{tcp,udp} table for a local port (state 0A,
// LISTEN, for TCP).
func hasPort(table []byte, port int, listen bool) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasSuffix(f[1], want) {
			continue
		}
		if !listen || f[3] == "0A" {
			return true
		}
	}
	return false
}
