package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/modes"
	"github.com/cnperf/cnperf/internal/spec"
)

// checkModesOnDrivers refuses a mode that its lab's driver cannot build
// (overlay-encrypted on the docker driver) before any lab is built. The
// driver's own Check says so too, but only when that lab's turn comes,
// after the labs before it were built.
func checkModesOnDrivers(s spec.Spec) error {
	for _, pl := range s.Labs() {
		d, err := drivers.Lookup(pl.Driver)
		if err != nil {
			continue // drivers.Check says so
		}
		m, err := modes.Lookup(pl.Mode)
		if err != nil {
			continue // modes.Check says so
		}
		if d.Builds(m) {
			continue
		}
		var can []string
		for _, o := range modes.All() {
			if d.Builds(o) {
				can = append(can, o.Name())
			}
		}
		return fmt.Errorf("modes[%d]: %s cannot be built on the %s driver (it builds %s)", slices.Index(s.Modes, pl.Mode), pl.Mode, d.Name(), strings.Join(can, ", "))
	}
	return nil
}
