package workload

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// SendFile is a file holding b, for a server or sender to send with
// sendfile(2) instead of copying b from user memory, and its kind; -1
// when none can be made and filled. With tmpfile, it is first an unnamed
// file (O_TMPFILE) in the temporary directory, as iperf3 -Z sends from an
// unlinked file there: a disk file system's page cache holds b in large
// folios, where sendfile looks a memfd's (shmem) pages up one by one
// (12 % of stream's sender CPU with 4 streams, docs/benchmarks.md).
// Otherwise, or where no such file can be made (a read-only root), it is
// a memfd named name. Either leaves nothing behind once closed.
func SendFile(b []byte, name string, tmpfile bool) (fd int, kind string) {
	if tmpfile {
		fd, err := unix.Open(os.TempDir(), unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err == nil {
			if fill(fd, b) == nil {
				return fd, "tmpfile"
			}
			unix.Close(fd)
		}
	}
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return -1, ""
	}
	if fill(fd, b) != nil {
		unix.Close(fd)
		return -1, ""
	}
	return fd, "memfd"
}

func fill(fd int, b []byte) error {
	for off := 0; off < len(b); {
		n, err := unix.Pwrite(fd, b[off:], int64(off))
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += n
	}
	return nil
}
