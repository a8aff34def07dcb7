package conditions

import "fmt"

// conntrack_max's bounds: below a few hundred entries a lab's own
// control connections fill the table; above 16 Mi the kernel's table
// would take gigabytes.
const (
	MinConntrackMax = 256
	MaxConntrackMax = 1 << 24
)

// validateConntrack checks conntrack_max.
func (s Set) validateConntrack() error {
	if s.ConntrackMax != 0 && (s.ConntrackMax < MinConntrackMax || s.ConntrackMax > MaxConntrackMax) {
		return fmt.Errorf("conntrack_max %d: want %d..%d", s.ConntrackMax, MinConntrackMax, MaxConntrackMax)
	}
	return nil
}
