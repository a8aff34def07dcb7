package ciliumoff

import (
	"slices"
	"testing"
)

func TestOff(t *testing.T) {
	if !slices.IsSorted(Features) {
		t.Errorf("Features not sorted: %v", Features)
	}
	data := map[string]string{"enable-ipv6": "false", "enable-hubble": " False", "enable-l7-proxy": "true", "unknown-key": "false", "bpf-lb-sock": "false"}
	if got, want := Off(data), []string{"bpf-lb-sock", "enable-hubble", "enable-ipv6"}; !slices.Equal(got, want) {
		t.Errorf("Off = %v, want %v", got, want)
	}
	if got := Off(nil); got != nil {
		t.Errorf("Off(nil) = %v", got)
	}
}
