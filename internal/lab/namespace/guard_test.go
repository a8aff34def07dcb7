package namespace

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRefuseLabFromMachine: outside a lab's namespaces a lab address
// (IPv4 or IPv6) is refused before any packet leaves, other addresses
// pass; inside a lab's namespace nothing is refused.
func TestRefuseLabFromMachine(t *testing.T) {
	if InLab() {
		t.Skip("the test runs inside a lab's namespace")
	}
	for _, tc := range []struct {
		addr   string
		refuse bool
	}{
		{"198.18.0.2:2375", true},
		{"198.19.255.254:80", true},
		{"[2001:2::5]:2375", true},
		{"[::ffff:198.18.0.2]:2375", true},
		{"127.0.0.1:2375", false},
		{"198.20.0.1:2375", false},
		{"[2001:3::1]:2375", false},
		{"docker.example.com:2375", false}, // not resolved: the dialer hands Control an address
	} {
		err := RefuseLabFromMachine("tcp", tc.addr, nil)
		if got := err != nil; got != tc.refuse {
			t.Errorf("%s: %v, want refused %v", tc.addr, err, tc.refuse)
		} else if err != nil && !strings.Contains(err.Error(), "lab address") {
			t.Errorf("%s: %v, want it named a lab address", tc.addr, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a namespace")
	}
	// A namespace of its own that is no lab's is refused too.
	done := make(chan error)
	go func() {
		// This thread never leaves the new namespace: it ends with the
		// goroutine, which exits still locked to it.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		done <- RefuseLabFromMachine("tcp", "198.18.0.2:2375", nil)
	}()
	if err := <-done; err == nil {
		t.Error("in an unnamed namespace: passed, want the lab address refused")
	}
	name := fmt.Sprintf("%sguardtest%d-h", labNamePrefix, os.Getpid())
	if err := Create(name, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Delete(name) })
	if err := Do(name, func() error { return RefuseLabFromMachine("tcp", "198.18.0.2:2375", nil) }); err != nil {
		t.Errorf("inside lab namespace %s: %v, want the lab address passed", name, err)
	}
}
