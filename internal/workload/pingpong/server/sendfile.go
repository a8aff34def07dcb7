package server

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/workload"
)

// Bodies of sendfileMin bytes or more leave with sendfile(2) from a memfd
// holding pong's buffer: the kernel sends the file's pages, so the body
// is not copied from user memory into the socket, as nginx sends a static
// file (sendfile on). Below, the copy costs less than the extra flush.
const sendfileMin = 32 << 10

// bodyFile is a memfd with buf's bytes, or -1 when the kernel has no memfd
// or it cannot be filled (pong then writes from buf).
func bodyFile(buf []byte) int {
	fd, _ := workload.SendFile(buf, "cnperf-pong-body", false)
	return fd
}

// flusher is fasthttp's buffered connection writer.
type flusher interface {
	io.Writer
	Flush() error
}

// sendfile writes the body, from b.off on, as "p" through w (behind the
// headers, flushed) and the rest with sendfile from the memfd; ok is
// false, with nothing written, when it cannot (small body, no memfd, a
// conn without a socket).
func (b *pongBody) sendfile(w io.Writer) (n int64, ok bool, err error) {
	fw, isFlusher := w.(flusher)
	sc, isSock := b.conn.(syscall.Conn)
	if b.h.file < 0 || b.n-b.off < sendfileMin || len(b.h.buf) < sendfileMin || !isFlusher || !isSock || b.off != 0 {
		return 0, false, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	start := b.off
	// The "p" leaves with the headers, flushed; corking them onto the
	// body, as nginx's tcp_nopush does, cost two more system calls a
	// response and measured no faster.
	m, err := fw.Write(b.segment()) // "p"
	b.off += m
	if err == nil {
		err = fw.Flush()
	}
	if err == nil {
		b.h.sendfiles.Add(1)
		b.sendErr = nil
		if err = rc.Write(b.sendFn); err == nil {
			err = b.sendErr
		}
	}
	return int64(b.off - start), true, err
}

// sendChunks is rc.Write's callback (bound once per pongBody, in sendFn,
// so that a response allocates nothing): sendfile until the body is out,
// false to wait until the socket takes more.
func (b *pongBody) sendChunks(fd uintptr) bool {
	size := len(b.h.buf)
	for b.off < b.n {
		left := b.n - b.off
		// The buffer's o's for all but its last bytes, then its tail.
		off, count := int64(0), min(left-2, size-2)
		if left <= size {
			off, count = int64(size-left), left
		}
		k, e := unix.Sendfile(int(fd), b.h.file, &off, count)
		if k > 0 {
			b.off += k
		}
		switch {
		case e == unix.EAGAIN:
			return false
		case e == unix.EINTR:
		case e != nil:
			b.sendErr = e
			return true
		case k == 0:
			b.sendErr = io.ErrShortWrite
			return true
		}
	}
	return true
}
