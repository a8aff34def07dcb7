package workload

import (
	"bytes"
	"os"
	"syscall"
	"testing"
)

// TestSendFile: the file holds the bytes, is an unnamed file in the
// temporary directory when asked and one can be made, else a memfd, and
// leaves nothing in the directory.
func TestSendFile(t *testing.T) {
	block := make([]byte, 200<<10)
	for i := range block {
		block[i] = byte(i * 7)
	}
	tests := []struct {
		name, tmpdir string
		tmpfile      bool
		want         string
	}{
		{"temporary directory", t.TempDir(), true, "tmpfile"},
		{"no temporary directory", "/nonexistent-cnperf-test-dir", true, "memfd"},
		{"memfd asked for", t.TempDir(), false, "memfd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TMPDIR", tt.tmpdir)
			fd, kind := SendFile(block, "cnperf-test", tt.tmpfile)
			if fd < 0 {
				t.Fatal("no file")
			}
			defer syscall.Close(fd)
			if kind != tt.want {
				t.Errorf("file %q, want %q", kind, tt.want)
			}
			got := make([]byte, len(block)+1)
			n, err := syscall.Pread(fd, got, 0)
			if err != nil || n != len(block) || !bytes.Equal(got[:n], block) {
				t.Errorf("file holds %d bytes (%v), not the block", n, err)
			}
			if ents, _ := os.ReadDir(tt.tmpdir); len(ents) != 0 {
				t.Errorf("left %d entries in %s", len(ents), tt.tmpdir)
			}
		})
	}
}
