package spec_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
)

// TestLoadIsBounded: a spec path that never ends (/dev/zero) is refused
// after MaxSpecBytes, not read into memory whole.
func TestLoadIsBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := spec.Load("/dev/zero")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: larger than 1048576 bytes") {
		t.Errorf("err %v", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20 {
		t.Errorf("allocated %d MB", a>>20)
	}
}
