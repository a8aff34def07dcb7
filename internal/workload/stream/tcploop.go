package stream

import (
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/workload"
)

// tcpLoop writes every TCP stream of a test from one OS thread with its own
// epoll set, as iperf3 drives its streams from one select loop:
// non-blocking sendfile(2) or write(2) calls to each writable stream per
// round. The sockets are dup'ed and their net.Conns closed first, so Go's
// netpoller does not wake for every freed buffer, and the goroutine
// scheduler stays out of the data path (with several streams on one CPU
// it cost a quarter of the throughput). With several threads (as iperf3
// 3.16+ gives each stream one), each runs the same loop over its share of
// the streams, with an epoll set of its own, on an OS thread of its own.
type tcpLoop struct {
	fds    []int
	shares [][]int     // the streams of each thread: stream i in shares[i%threads]
	eps    []int       // each share's epoll set
	file   int         // a file holding the block, sent with sendfile; -1: write(2)
	from   string      // the file: "tmpfile" or "memfd" (workload.SendFile)
	wrote  atomic.Bool // a thread fell back to write(2): the socket cannot splice
	stop   atomic.Bool
}

// newTCPLoop takes over conns; nil (conns untouched) when one has no file
// descriptor or epoll fails. With zerocopy, each block is sent with
// sendfile(2) from a file holding block (as iperf3 -Z): the socket takes
// the file's pages, and the sender does not copy each block from user
// memory; without a file it writes. Its threads share the one file.
func newTCPLoop(conns []net.Conn, block []byte, zerocopy bool, threads int) *tcpLoop {
	l := &tcpLoop{file: -1}
	threads = max(1, min(threads, len(conns)))
	if zerocopy {
		l.file, l.from = workload.SendFile(block, "cnperf-stream-block", true)
	}
	for _, c := range conns {
		fd, ok := dupFd(c)
		if !ok {
			l.close()
			return nil
		}
		l.fds = append(l.fds, fd)
	}
	l.shares = make([][]int, threads)
	for i := range l.fds {
		l.shares[i%threads] = append(l.shares[i%threads], i)
	}
	for _, share := range l.shares {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			l.close()
			return nil
		}
		l.eps = append(l.eps, ep)
		for _, i := range share {
			if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, l.fds[i], &syscall.EpollEvent{Events: syscall.EPOLLOUT, Fd: int32(i)}); err != nil {
				l.close()
				return nil
			}
		}
	}
	for _, c := range conns {
		c.Close() // leaves Go's netpoller; the dup keeps the connection
	}
	return l
}

// threads is the OS threads the loop sends from.
func (l *tcpLoop) threads() int { return len(l.shares) }

// run sends until end or stop: one thread's loop over every stream in the
// calling goroutine, or, with several threads, one loop per share, each
// on an OS thread of its own (locked, and named senderThread so /proc
// tells them apart), and returns when every one has. Each of those holds
// its P throughout (raw system calls, hotcall.go), so the process gets a
// P per thread and one for the interval clock for the test.
func (l *tcpLoop) run(buf []byte, ctrs []counter, end time.Time, errs []error) {
	if l.threads() == 1 {
		l.runShare(0, buf, ctrs, end, errs)
		return
	}
	defer serverkit.AtLeastProcs(l.threads() + 1)()
	var wg sync.WaitGroup
	for s := range l.shares {
		wg.Go(func() {
			// Never unlocked: the thread, named, ends with the goroutine.
			runtime.LockOSThread()
			nameThread(senderThread)
			l.runShare(s, buf, ctrs, end, errs)
		})
	}
	wg.Wait()
}

// senderThread and receiverThread name the threads of a test sent or
// received by several (comm in /proc/PID/task/TID/stat: at most 15 bytes).
const (
	senderThread   = "cnperf-send"
	receiverThread = "cnperf-recv"
)

// nameThread names the calling OS thread (locked to its goroutine).
func nameThread(name string) {
	b := append([]byte(name), 0)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}

// runShare writes buf to every stream of share s until end or stop; errs[i]
// is set when stream i fails. Each round writes every stream until its socket is full
// (at most maxBurst writes; one sendfile), and only when every one was
// full does the thread wait in epoll_wait, as iperf3 3.12 writes several blocks per
// select; with one epoll_wait per write, the thread slept and woke for
// every block (13,000 context switches a second where iperf3 had 70). The
// system calls are raw (hotcall.go): the scheduler is not entered per
// write, and the loop yields every yieldEvery so the interval clock runs.
func (l *tcpLoop) runShare(s int, buf []byte, ctrs []counter, end time.Time, errs []error) {
	share, ep := l.shares[s], l.eps[s]
	send, op, burst := rawWrite, "write", maxBurst
	fileFd := l.file
	if fileFd >= 0 {
		file := uintptr(fileFd)
		send, op, burst = func(fd uintptr, p []byte) (int, syscall.Errno) { return rawSendfile(fd, file, len(p)) }, "sendfile", 1
	}
	events := make([]syscall.EpollEvent, len(share))
	live := make([]bool, len(l.fds))
	nLive := len(share)
	for _, i := range share {
		live[i] = true
	}
	fail := func(i int, e syscall.Errno) {
		errs[i] = os.NewSyscallError(op, e)
		_, _, _ = syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(ep), syscall.EPOLL_CTL_DEL, uintptr(l.fds[i]), 0, 0, 0)
		live[i] = false
		nLive--
	}
	start := time.Now()
	endAt := end.Sub(start)
	var y serverkit.Yielder
	for nLive > 0 && !l.stop.Load() {
		wrote := false
		for _, i := range share {
			fd := l.fds[i]
			for k := 0; live[i] && k < burst; k++ {
				n, e := send(uintptr(fd), buf)
				if n > 0 {
					ctrs[i].bytes.Add(int64(n))
					wrote = true
				}
				if e == syscall.EAGAIN {
					break
				}
				if fileFd >= 0 && (e == syscall.EINVAL || e == syscall.ENOSYS || e == syscall.EOPNOTSUPP) {
					// A socket or kernel that cannot splice: write
					// from here on, and say so in the result.
					fileFd = -1
					l.wrote.Store(true)
					send, op, burst = rawWrite, "write", maxBurst
					continue
				}
				if e != 0 && e != syscall.EINTR {
					fail(i, e)
				}
			}
		}
		now := time.Since(start)
		if now >= endAt {
			return
		}
		y.Maybe(now, yieldEvery)
		if wrote {
			continue
		}
		wait := min(endAt-now, yieldEvery)
		// Raw too: the client runs one test, so no goroutine needs this P
		// while the loop waits (the interval clock runs when it yields),
		// and a wait that entered the scheduler had sysmon take the P and
		// poll every 20 µs, on the sender's CPU. At most yieldEvery.
		_, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])),
			uintptr(len(events)), uintptr(wait/time.Millisecond)+1, 0, 0)
		if e != 0 && e != syscall.EINTR {
			for _, i := range share {
				if errs[i] == nil {
					errs[i] = os.NewSyscallError("epoll_wait", e)
				}
			}
			return
		}
	}
}

// maxBurst bounds the writes to one stream per round, so that one stream
// whose socket never fills cannot starve the others. Blocks sent with
// sendfile go one per stream per round, as iperf3 3.12 sends its streams
// in turn: here that made 1.16x the rate of bursts of 16 with 4 streams
// (ahead in 17 of 20 rotations) and 1.08x with one (7 of 8), where written
// blocks gained nothing from it (1.01x and 1.02x, 8 rotations each) and
// caused more retransmits.
const maxBurst = 16

// retransmits reads stream i's retransmitted segments from TCP_INFO.
func (l *tcpLoop) retransmits(i int) (int64, bool) {
	info, err := unix.GetsockoptTCPInfo(l.fds[i], unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0, false
	}
	return int64(info.Total_retrans), true
}

func (l *tcpLoop) close() {
	for _, fd := range l.fds {
		syscall.Close(fd)
	}
	l.fds = nil
	for _, ep := range l.eps {
		syscall.Close(ep)
	}
	l.eps = nil
	if l.file >= 0 {
		syscall.Close(l.file)
	}
	l.file = -1
}

// sentFrom is the kind of file the loop sends with sendfile; "" when it
// writes.
func (l *tcpLoop) sentFrom() string {
	if l.file < 0 || l.wrote.Load() {
		return ""
	}
	return l.from
}

// dupFd duplicates c's socket as a non-blocking, close-on-exec descriptor.
func dupFd(c net.Conn) (int, bool) {
	fd, err := serverkit.Dup(c)
	return fd, err == nil
}
