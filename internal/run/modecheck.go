package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec"
)

// checkModesOnDrivers refuses a mode that its lab's driver cannot build
// (overlay-encrypted on the docker driver) before any lab is built. The
// driver's own Validate says so too, but only when that lab's turn comes,
// after the labs before it were built.
func checkModesOnDrivers(cat lab.Catalog, s spec.Spec) error {
	for _, pl := range s.Labs() {
		d, err := cat.Driver(pl.Driver)
		if err != nil {
			continue // CheckDrivers says so
		}
		m, err := cat.Mode(pl.Mode)
		if err != nil {
			continue // CheckModes says so
		}
		if d.Builds(m) {
			if err := d.CheckFamily(m, pl.Conditions); err != nil {
				return fmt.Errorf("modes[%d]: %w", slices.Index(s.Modes, pl.Mode), err)
			}
			continue
		}
		var can []string
		for _, o := range cat.Modes {
			if d.Builds(o) {
				can = append(can, o.Name())
			}
		}
		return fmt.Errorf("modes[%d]: %s cannot be built on the %s driver (it builds %s)", slices.Index(s.Modes, pl.Mode), pl.Mode, d.Name(), strings.Join(can, ", "))
	}
	return nil
}
