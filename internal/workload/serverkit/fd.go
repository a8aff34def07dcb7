package serverkit

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoSocket: a conn or listener has no kernel socket (a test's pipe, a
// custom Dial's conn).
var ErrNoSocket = errors.New("no socket")

// Control runs fn on the descriptor of c's socket (c a net.Conn or a
// net.Listener); false, fn not run, when c has no open socket.
func Control(c any, fn func(fd uintptr)) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	return err == nil && rc.Control(fn) == nil
}

// Dup duplicates c's socket, close-on-exec and non-blocking, for a loop
// that makes its own system calls on it. The duplicate shares the
// socket's file, so closing c then takes the socket off Go's netpoller
// (which would otherwise wake a thread for everything that arrives) while
// the duplicate keeps it. ErrNoSocket when c has no open socket.
func Dup(c any) (int, error) {
	fd, err := -1, ErrNoSocket
	Control(c, func(f uintptr) { fd, err = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) })
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
