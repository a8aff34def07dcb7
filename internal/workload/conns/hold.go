// Package conns holds many TCP connections open, idle or trickling a byte
// now and then, while an rr probe measures the round trip beside them
// (descriptors.Conns). Its server is rr's server for the probe and a
// holder on the ports after it; the holder keeps each connection as an
// open file in one epoll set, with no goroutine or buffer of its own, so
// that a million connections cost the kernel's sockets and little else.
package conns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// Holder accepts TCP connections on its listeners and holds them until
// their client closes them, reading and dropping what they send; beyond
// its cap a new connection is closed at once.
type Holder struct {
	ep, wake int
	lns      map[int]bool
	held     map[int]bool
	max      int
	refused  int64
	logf     func(format string, a ...any)
}

// ListenHold listens on host's ports from..from+n-1 for at most max held
// connections; max is lowered to what RLIMIT_NOFILE allows (raised to its
// hard limit first), less a margin for the process's other files.
func ListenHold(host string, from, n, max int) (*Holder, error) {
	files, err := RaiseFiles(max + fileMargin)
	if err != nil {
		return nil, err
	}
	h := &Holder{lns: map[int]bool{}, held: map[int]bool{}, max: min(max, files-fileMargin)}
	if h.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	if h.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		h.close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := h.watch(h.wake); err != nil {
		h.close()
		return nil, err
	}
	for p := from; p < from+n; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			h.close()
			return nil, err
		}
		fd, err := serverkit.Dup(ln) // the duplicate outlives the listener
		ln.Close()
		if err == nil {
			h.lns[fd] = true
			err = h.watch(fd)
		}
		if err != nil {
			h.close()
			return nil, fmt.Errorf("hold port %d: %w", p, err)
		}
	}
	return h, nil
}

// fileMargin is what RLIMIT_NOFILE keeps for files besides the held
// connections (listeners, the probe's, the runtime's).
const fileMargin = 256

// RaiseFiles raises RLIMIT_NOFILE's soft limit to want files, raising
// the hard limit too where the process may (root, up to fs.nr_open), or
// else to the hard limit, and returns the soft limit.
func RaiseFiles(want int) (int, error) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		return 0, fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	if w := uint64(want); w > l.Max {
		if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
			if open, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
				w = min(w, open)
			}
		}
		if unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: w, Max: w}) == nil {
			l = unix.Rlimit{Cur: w, Max: w}
		}
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
			return 0, fmt.Errorf("raise RLIMIT_NOFILE to %d: %w", l.Max, err)
		}
	}
	return int(min(l.Cur, 1<<30)), nil
}

func (h *Holder) watch(fd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd)}
	if err := unix.EpollCtl(h.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll add: %w", err)
	}
	return nil
}

// Serve holds connections until ctx ends, then closes every one.
func (h *Holder) Serve(ctx context.Context, logf func(format string, a ...any)) error {
	h.logf = logf
	defer h.close()
	stop := context.AfterFunc(ctx, func() { _, _ = unix.Write(h.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0}) })
	defer stop()
	events := make([]unix.EpollEvent, 256)
	buf := make([]byte, 4096)
	for {
		n, err := unix.EpollWait(h.ep, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll wait: %w", err)
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			switch {
			case fd == h.wake:
				return nil
			case h.lns[fd]:
				h.accept(fd)
			default:
				h.drain(fd, buf)
			}
		}
	}
}

// accept takes every pending connection of listener fd.
func (h *Holder) accept(fd int) {
	for {
		c, _, err := unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.ECONNABORTED) {
				h.logf("accept: %v", err)
			}
			return
		}
		if len(h.held) >= h.max {
			unix.Close(c)
			if h.refused++; h.refused == 1 {
				h.logf("holding %d connections, the most allowed: closing new ones", h.max)
			}
			continue
		}
		if err := h.watch(c); err != nil {
			unix.Close(c)
			continue
		}
		h.held[c] = true
	}
}

// drain reads and drops what connection fd sent, and closes it at its
// end (EOF, reset).
func (h *Holder) drain(fd int, buf []byte) {
	for {
		n, err := unix.Read(fd, buf)
		if n > 0 {
			continue
		}
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return
		}
		_ = unix.EpollCtl(h.ep, unix.EPOLL_CTL_DEL, fd, nil)
		unix.Close(fd)
		delete(h.held, fd)
		return
	}
}

func (h *Holder) close() {
	for fd := range h.held {
		unix.Close(fd)
	}
	for fd := range h.lns {
		unix.Close(fd)
	}
	h.held, h.lns = map[int]bool{}, map[int]bool{}
	for _, fd := range []int{h.wake, h.ep} {
		if fd > 0 {
			unix.Close(fd)
		}
	}
}
