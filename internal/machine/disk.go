package machine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds of the disk test's file.
const (
	DefaultDiskBytes = 256 << 20
	MinDiskBytes     = 8 << 20
	MaxDiskBytes     = 16 << 30
	diskBlock        = 1 << 20 // a multiple of every device's direct I/O alignment
)

// Disk is one sequential write and read of a file.
type Disk struct {
	Write, Read float64 // bytes per second
	// Method says how the page cache was kept out: "direct I/O", or
	// dropping the file's pages (when the file system refuses O_DIRECT).
	Method string
}

// DiskSpeed writes a file of size bytes (a whole number of MiB) into dir,
// syncs it, reads it back past the page cache, and removes it.
func DiskSpeed(dir string, size int64) (Disk, error) {
	if size < MinDiskBytes || size > MaxDiskBytes {
		return Disk{}, fmt.Errorf("disk size %d: outside %d..%d bytes", size, MinDiskBytes, MaxDiskBytes)
	}
	size -= size % diskBlock
	buf, err := unix.Mmap(-1, 0, diskBlock, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return Disk{}, fmt.Errorf("disk buffer: %w", err) // page-aligned, as O_DIRECT needs
	}
	defer unix.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i*31 + 7) // not zeros: no file system may skip them
	}
	path := filepath.Join(dir, fmt.Sprintf("cnperf-disk-%d.tmp", os.Getpid()))
	defer os.Remove(path)
	d := Disk{Method: "direct I/O"}
	w, err := timeWrite(path, buf, size, unix.O_DIRECT)
	if errors.Is(err, unix.EINVAL) {
		d.Method = "page cache dropped (posix_fadvise DONTNEED; O_DIRECT refused)"
		w, err = timeWrite(path, buf, size, 0)
	}
	if err != nil {
		return Disk{}, err
	}
	flag := unix.O_DIRECT
	if d.Method != "direct I/O" {
		flag = 0
		if err := dropCache(path); err != nil {
			return Disk{}, err
		}
	}
	r, err := timeRead(path, buf, flag)
	if err != nil {
		return Disk{}, err
	}
	if w <= 0 || r <= 0 {
		return Disk{}, errNoMeasure
	}
	d.Write, d.Read = float64(size)/w, float64(size)/r
	return d, nil
}

// timeWrite writes size bytes of buf over and over into a new file opened
// with flag, syncs it and returns the seconds.
func timeWrite(path string, buf []byte, size int64, flag int) (float64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|flag, 0o600)
	if err != nil {
		return 0, fmt.Errorf("disk write: %w", err)
	}
	defer f.Close()
	start := time.Now()
	for done := int64(0); done < size; done += int64(len(buf)) {
		if _, err := f.Write(buf); err != nil {
			return 0, fmt.Errorf("disk write %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("disk sync %s: %w", path, err)
	}
	return time.Since(start).Seconds(), nil
}

// timeRead reads the file to its end and returns the seconds.
func timeRead(path string, buf []byte, flag int) (float64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|flag, 0)
	if err != nil {
		return 0, fmt.Errorf("disk read: %w", err)
	}
	defer f.Close()
	start := time.Now()
	for {
		_, err := f.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("disk read %s: %w", path, err)
		}
	}
	return time.Since(start).Seconds(), nil
}

// dropCache evicts a synced file's pages from the page cache.
func dropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("drop %s from the page cache: %w", path, err)
	}
	return nil
}

// fsName names dir's file system type for the profile's notes: tmpfs
// holds files in memory, so its "disk" is RAM.
func fsName(dir string) string {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return "unknown"
	}
	switch st.Type {
	case unix.TMPFS_MAGIC:
		return "tmpfs (in memory: the disk features measure RAM)"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay"
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	}
	return fmt.Sprintf("0x%x", st.Type)
}
