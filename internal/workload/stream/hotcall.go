package stream

import (
	"syscall"
	"time"
	"unsafe"
)

// The data loops (tcploop.go, readloop.go) make their reads and writes,
// which never block, raw: RawSyscall keeps the goroutine on its thread and
// P, where Syscall enters the scheduler, and when a call takes longer than
// sysmon's tick (20 µs; a 128 KiB write through a veth pair does) and no P
// is idle (one CPU, GOMAXPROCS 1), sysmon takes the P away and the thread
// has to win it back. Their waits (epoll_wait) do enter the scheduler, so
// a server's P serves other tests while one waits; the exception is a
// one-stream test's reader (readOne), which blocks in raw reads on a P
// the server lends it for the test, until its stream idles. The loops yield every
// yieldEvery, so the interval clock and the control connection get the P,
// and so sysmon never has to preempt them.

const yieldEvery = 5 * time.Millisecond

func rawWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

// rawSendfile sends the first n bytes of file (from offset 0 each time:
// every block is the same) to the socket fd.
func rawSendfile(fd, file uintptr, n int) (int, syscall.Errno) {
	var off int64
	k, _, e := syscall.RawSyscall6(syscall.SYS_SENDFILE, fd, file, uintptr(unsafe.Pointer(&off)), uintptr(n), 0, 0)
	return int(k), e
}

func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

// readWait is a blocking read: raw, or, when idle, a call that enters the
// scheduler, which sysmon leaves alone (readOne).
func readWait(fd uintptr, p []byte, idle bool) (int, syscall.Errno) {
	if !idle {
		return rawRead(fd, p)
	}
	n, _, e := syscall.Syscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}
