// Package drivers lists the drivers that build labs, and runs the labs'
// lifecycle over them. Adding a driver means adding its package and one
// line in All.
package drivers

import (
	"fmt"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/kube"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// All returns every driver, the default first. A driver that builds on
// another's hosts comes after it (lab.Down removes last first).
func All() []lab.Driver {
	return []lab.Driver{netns.Driver{}, docker.Driver{}, kube.Driver{}}
}

// Names returns the drivers' names in All's order.
func Names() []string {
	var n []string
	for _, d := range All() {
		n = append(n, d.Name())
	}
	return n
}

// Lookup finds a driver by name; "" is the default.
func Lookup(name string) (lab.Driver, error) {
	all := All()
	if name == "" {
		return all[0], nil
	}
	for _, d := range all {
		if d.Name() == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("lab: unknown driver %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Check says which of a spec's drivers (its driver, or its drivers list
// when it compares several) is not a driver, in the spec's words.
func Check(driver string, list []string) error {
	known := strings.Join(Names(), ", ")
	if _, err := Lookup(driver); err != nil || driver == "" {
		return fmt.Errorf("driver %q: unknown (known: %s)", driver, known)
	}
	for i, d := range list {
		if _, err := Lookup(d); err != nil || d == "" {
			return fmt.Errorf("drivers[%d] %q: unknown (known: %s)", i, d, known)
		}
	}
	return nil
}

// Up builds a lab with the driver cfg names.
func Up(cfg lab.Config) (*lab.Lab, error) {
	d, err := Lookup(cfg.Driver)
	if err != nil {
		return nil, err
	}
	return lab.Up(d, cfg)
}

// Down removes a lab, whichever driver built it.
func Down(name string) error { return lab.Down(name, All()...) }

// List finds every lab on the machine.
func List() ([]lab.Info, error) { return lab.List(All()...) }

// Clean removes the labs of owners that have exited (every lab with all).
func Clean(all bool) (lab.Cleaned, error) { return lab.Clean(all, All()...) }
