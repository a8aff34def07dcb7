package ovs

import (
	"strings"
	"testing"
)

// TestSummarySaysTheDatapath: the lab's description, which every run
// records, says the bridge forwards in user space by the mode's design,
// not for want of a kernel module: a reader comparing with Bryzgalov's
// kernel datapath must not think another kernel would have given it.
func TestSummarySaysTheDatapath(t *testing.T) {
	s := Mode{}.Summary()
	for _, want := range []string{"user-space netdev datapath", "by design", "not the kernel's"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary %q lacks %q", s, want)
		}
	}
	for _, blame := range []string{"this kernel", "this machine", "here"} {
		if strings.Contains(s, blame) {
			t.Errorf("summary %q says %q", s, blame)
		}
	}
}
