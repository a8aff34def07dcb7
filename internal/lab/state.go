package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cnperf/cnperf/internal/lab/conntrack"
)

// StateRoot holds the modes' own files, per lab and mode
// (StateRoot/LAB/MODE): Open vSwitch's databases, sockets and logs.
const StateRoot = "/run/cnperf/state"

// legacyStateRoots held modes' files, per lab, in earlier versions
// (/run/cnperf/ovs/LAB): Down and Clean remove a lab's there too.
var legacyStateRoots = []string{"/run/cnperf/ovs"}

// makeStateDir creates a mode's directory of a lab.
func makeStateDir(lab, mode string) (string, error) {
	if ValidName(lab) != nil || mode == "" || mode != filepath.Base(mode) {
		return "", fmt.Errorf("state directory for lab %q, mode %q: bad name", lab, mode)
	}
	dir := filepath.Join(StateRoot, lab, mode)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	return dir, nil
}

// removeState removes a lab's state directory (the daemons that used it
// are gone with the lab's processes) and the roots once empty.
func removeState(lab string) error {
	// The machine's nf_conntrack_max first: its record is in the state.
	if err := conntrack.Restore(StateRoot, filepath.Join(StateRoot, lab)); err != nil {
		return fmt.Errorf("lab %s: %w", lab, err)
	}
	var errs []error
	for _, root := range append([]string{StateRoot}, legacyStateRoots...) {
		if err := os.RemoveAll(filepath.Join(root, lab)); err != nil {
			errs = append(errs, fmt.Errorf("remove state of lab %s: %w", lab, err))
		}
		_ = os.Remove(root)
	}
	_ = os.Remove(filepath.Dir(StateRoot)) // /run/cnperf, once empty
	return errors.Join(errs...)
}

// stateLabs lists the labs that have a state directory.
func stateLabs() []string {
	var labs []string
	for _, root := range append([]string{StateRoot}, legacyStateRoots...) {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if e.IsDir() {
				labs = append(labs, e.Name())
			}
		}
	}
	return labs
}

// DriverState is a driver's directory of a lab (StateRoot/LAB/driver.NAME),
// created: where a driver that builds nothing on this machine (a remote
// cluster) keeps what it needs to find and remove the lab again.
func DriverState(lab, driver string) (string, error) { return makeStateDir(lab, "driver."+driver) }

// DriverStateLabs lists the labs that have a driver's state directory.
func DriverStateLabs(driver string) []string {
	var labs []string
	for _, name := range stateLabs() {
		if fi, err := os.Stat(filepath.Join(StateRoot, name, "driver."+driver)); err == nil && fi.IsDir() {
			labs = append(labs, name)
		}
	}
	return labs
}

// DriverStatePath is where DriverState is, whether or not it exists.
func DriverStatePath(lab, driver string) string {
	return filepath.Join(StateRoot, lab, "driver."+driver)
}

// StateDir is a lab's directory for a tool that builds on it (StateRoot/
// LAB/PART), created: `cnperf cluster` keeps a test cluster's files there,
// so that removing the lab (down, clean) removes them with it.
func StateDir(lab, part string) (string, error) { return makeStateDir(lab, part) }

// StatePath is where StateDir is, whether or not it exists.
func StatePath(lab, part string) string { return filepath.Join(StateRoot, lab, part) }

// SetConntrackMax sets the machine's nf_conntrack_max for a lab (its
// conntrack_max condition), recording the value it replaces in the lab's
// state, which removing the lab (Down, Clean) puts back.
func SetConntrackMax(lab string, n int) error {
	if ValidName(lab) != nil {
		return fmt.Errorf("conntrack_max: bad lab name %q", lab)
	}
	return conntrack.SetMax(StateRoot, filepath.Join(StateRoot, lab), n)
}

// CheckConntrackMax refuses, before a lab is built, a conntrack_max that
// another lab set to another value.
func CheckConntrackMax(lab string, n int) error {
	_, err := conntrack.Free(StateRoot, filepath.Join(StateRoot, lab), n)
	return err
}
