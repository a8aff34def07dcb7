package process

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseInheritedOnExec: a descriptor opened without close-on-exec, as
// flock hands its lock to the command it runs, is close-on-exec after.
func TestCloseInheritedOnExec(t *testing.T) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	flags := func() int {
		f, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if flags()&unix.FD_CLOEXEC != 0 {
		t.Fatal("the descriptor is close-on-exec before the call")
	}
	if err := CloseInheritedOnExec(); err != nil {
		t.Fatal(err)
	}
	if flags()&unix.FD_CLOEXEC == 0 {
		t.Error("the descriptor is still inherited by what cnperf starts")
	}
}

func TestLastLine(t *testing.T) {
	for in, want := range map[string]string{"a\nb\n\n": "b", "": "", "one": "one", strings.Repeat("x", 400): strings.Repeat("x", 300) + "..."} {
		if got := LastLine([]byte(in)); got != want {
			t.Errorf("LastLine(%.20q) = %q, want %q", in, got, want)
		}
	}
}
