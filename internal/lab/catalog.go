package lab

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/spec"
)

// Catalog is what a binary links of the lab: its drivers (the default
// first; a driver that builds on another's hosts after it) and its modes
// (the reference first). The runner and the CLI take one and never import
// a driver or a mode: internal/lab/drivers makes the binary's.
type Catalog struct {
	Drivers []Driver
	Modes   []Mode
	// Commands are the commands the drivers add to the CLI: what they run
	// inside their own hosts (hidden) and their tools. version is cnperf's.
	// An error they return wrapped in Failure exits 1, any other 2.
	Commands func(version string, stdout, stderr io.Writer) []*cobra.Command
}

// DriverNames returns the drivers' names in order.
func (c Catalog) DriverNames() []string {
	var n []string
	for _, d := range c.Drivers {
		n = append(n, d.Name())
	}
	return n
}

// Driver finds a driver by name; "" is the default.
func (c Catalog) Driver(name string) (Driver, error) {
	if len(c.Drivers) == 0 {
		return nil, errors.New("lab: this binary has no drivers")
	}
	if name == "" {
		return c.Drivers[0], nil
	}
	for _, d := range c.Drivers {
		if d.Name() == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("lab: unknown driver %q (known: %s)", name, strings.Join(c.DriverNames(), ", "))
}

// CheckDrivers says which of a spec's drivers (its driver, or its drivers
// list when it compares several) is not a driver, in the spec's words.
func (c Catalog) CheckDrivers(driver string, list []string) error {
	known := strings.Join(c.DriverNames(), ", ")
	if _, err := c.Driver(driver); err != nil || driver == "" {
		return fmt.Errorf("driver %q: unknown (known: %s)", driver, known)
	}
	for i, d := range list {
		if _, err := c.Driver(d); err != nil || d == "" {
			return fmt.Errorf("drivers[%d] %q: unknown (known: %s)", i, d, known)
		}
	}
	return nil
}

// CheckSpec asks every driver, used or not, to check its section of the
// spec and what the spec asks of it (Driver.CheckSpec).
func (c Catalog) CheckSpec(s spec.Spec) error {
	for _, d := range c.Drivers {
		if err := d.CheckSpec(s); err != nil {
			return err
		}
	}
	return nil
}

// ModeNames returns the modes' names in order.
func (c Catalog) ModeNames() []string {
	var n []string
	for _, m := range c.Modes {
		n = append(n, m.Name())
	}
	return n
}

// Mode finds a mode by name.
func (c Catalog) Mode(name string) (Mode, error) {
	for _, m := range c.Modes {
		if m.Name() == name {
			return m, nil
		}
	}
	known := c.ModeNames()
	sort.Strings(known)
	return nil, fmt.Errorf("unknown mode %q (known: %s)", name, strings.Join(known, ", "))
}

// CheckModes says which of a spec's modes is not a mode, in the spec's
// words.
func (c Catalog) CheckModes(names []string) error {
	for i, name := range names {
		if _, err := c.Mode(name); err != nil {
			return fmt.Errorf("modes[%d]: %w", i, err)
		}
	}
	return nil
}

// Options decodes each of the spec's drivers' options, by driver name.
func (c Catalog) Options(s spec.Spec, flags map[string]string, t Topology, warn io.Writer) (map[string]any, error) {
	out := map[string]any{}
	for _, name := range s.RunDrivers() {
		d, err := c.Driver(name)
		if err != nil {
			return nil, err
		}
		if _, done := out[d.Name()]; done {
			continue
		}
		o, err := d.Options(OptionsInput{Spec: s, Flags: flags, Topology: t, Modes: c.Modes, Warn: warn})
		if err != nil {
			return nil, err
		}
		out[d.Name()] = o
	}
	return out, nil
}

// Preflight runs the preflight of each driver the spec uses, with the
// options Options decoded, then asks each of the spec's modes what it
// needs (Needs).
func (c Catalog) Preflight(s spec.Spec, options map[string]any, exe string) error {
	seen := map[string]bool{}
	for _, name := range s.RunDrivers() {
		d, err := c.Driver(name)
		if err != nil {
			return err
		}
		if seen[d.Name()] {
			continue
		}
		seen[d.Name()] = true
		if err := d.Preflight(PreflightInput{Spec: s, Options: options[d.Name()], Exe: exe}); err != nil {
			return err
		}
	}
	for i, name := range s.Modes {
		m, err := c.Mode(name)
		if err != nil {
			return fmt.Errorf("modes[%d]: %w", i, err)
		}
		if err := CheckNeeds(m); err != nil {
			return fmt.Errorf("modes[%d]: %w", i, err)
		}
	}
	return nil
}

// Up builds a lab with the driver cfg names.
func (c Catalog) Up(cfg Config) (*Lab, error) {
	d, err := c.Driver(cfg.Driver)
	if err != nil {
		return nil, err
	}
	return Up(d, cfg)
}

// Down removes a lab, whichever driver built it.
func (c Catalog) Down(name string) error { return Down(name, c.Drivers...) }

// List finds every lab on the machine.
func (c Catalog) List() ([]Info, error) { return List(c.Drivers...) }

// Clean removes the labs of owners that have exited (every lab with all).
func (c Catalog) Clean(all bool) (Cleaned, error) { return Clean(all, c.Drivers...) }
