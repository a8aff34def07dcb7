// Package toytest is a toy driver that shows what a driver is: its own
// package, registered with one line (drivers.Catalog(toytest.Driver{})).
// Its "hosts" are plain network namespaces on a bridge, with no cgroups
// and no containers; it builds only the bare mode (a process on each
// host's NIC), and starts servers and clients with exec inside a host's
// namespace (labtest.Runtime). The runner, the CLI, the spec and the
// record know nothing of it. Its test runs a socket test and ping-pong
// through run.Run.
package toytest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/labtest"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
)

// Name is the driver's name.
const Name = "toy"

// markPrefix marks the toy's namespaces (as a loopback alias), so that
// Down and Labs find them again and nobody else's.
const markPrefix = "cnperf-toy:"

// Driver is the toy driver.
type Driver struct{ lab.BaseDriver }

func (Driver) Name() string { return Name }

// Options: the toy has none.
func (Driver) Options(lab.OptionsInput) (any, error) { return nil, nil }

// Preflight: namespaces need root.
func (Driver) Preflight(lab.PreflightInput) error {
	if os.Geteuid() != 0 {
		return errors.New("the toy driver makes network namespaces: run as root")
	}
	return nil
}

// Builds: the bare mode only, which the toy builds itself.
func (Driver) Builds(m lab.Mode) bool { return m.Name() == "bare" }

// Validate refuses another mode, conditions, a chain and a lab that exists.
func (d Driver) Validate(cfg lab.Config) error {
	switch {
	case !d.Builds(cfg.Mode):
		return fmt.Errorf("lab: mode %s cannot be built on the %s driver", cfg.Mode.Name(), Name)
	case !cfg.Conditions.Empty():
		return fmt.Errorf("lab: the %s driver applies no conditions", Name)
	case cfg.Topology.Chain:
		return fmt.Errorf("lab: the %s driver builds no chains", Name)
	}
	if nss, err := namespaces(cfg.Name); err != nil || len(nss) > 0 {
		return fmt.Errorf("lab %s already exists", cfg.Name)
	}
	return nil
}

// Up makes a switch namespace with a bridge and one namespace per host
// on it (198.18.0.i/24), and an endpoint in each host's namespace.
func (Driver) Up(l *lab.Lab, cfg lab.Config) error {
	mark := markPrefix + cfg.Name
	l.Switch = lab.NS(cfg.Name, lab.SwitchHost)
	b := netdev.B{Lab: cfg.Name}
	if err := namespace.Create(l.Switch, mark); err != nil {
		return err
	}
	if err := b.Bridge(l.Switch, "br0", 1500); err != nil {
		return err
	}
	for i, hs := range cfg.Topology.Hosts {
		h := lab.Host{Name: hs.Name, Index: i + 1, NS: lab.NS(cfg.Name, hs.Name), Addr: lab.UnderlayIP(i + 1).String()}
		if err := namespace.Create(h.NS, mark); err != nil {
			return err
		}
		if err := b.Veth(l.Switch, h.Name, "br0", h.NS, "eth0", 1500); err != nil {
			return err
		}
		if err := b.Addr(h.NS, "eth0", h.Addr+"/24"); err != nil {
			return err
		}
		l.Hosts = append(l.Hosts, h)
	}
	for _, e := range l.NewBuild().Endpoints {
		h, p := e.Host, e.Port(cfg.Port)
		addr := lab.HostPort(h.Addr, p)
		l.Endpoints = append(l.Endpoints, lab.Endpoint{Host: h.Name, NS: h.NS,
			Listen: lab.HostPort("0.0.0.0", p), External: addr, Internal: addr, Path: []string{h.Name + ":eth0"}})
	}
	l.Runtime = &labtest.Runtime{} // exec in the endpoint's namespace
	return nil
}

// Down kills what runs in the lab's namespaces and deletes them.
func (Driver) Down(name string) error {
	nss, err := namespaces(name)
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range nss {
		pids, _ := namespace.Pids(ns)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if err := namespace.Delete(ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Labs lists the toy's labs (nobody owns them: a test removes its own).
func (Driver) Labs() ([]lab.Info, error) {
	nss, err := namespace.List(lab.Prefix)
	if err != nil {
		return nil, err
	}
	var out []lab.Info
	at := map[string]int{}
	for _, ns := range nss {
		m, err := namespace.Mark(ns)
		name, ok := strings.CutPrefix(m, markPrefix)
		if err != nil || !ok {
			continue
		}
		if _, seen := at[name]; !seen {
			at[name] = len(out)
			out = append(out, lab.Info{Name: name, Mode: "bare", OwnerText: "none"})
		}
		out[at[name]].Namespaces = append(out[at[name]].Namespaces, ns)
	}
	return out, nil
}

// namespaces are the lab's: named for it and carrying the toy's mark.
func namespaces(name string) ([]string, error) {
	nss, err := namespace.List(lab.Prefix + name + "-")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range nss {
		if m, err := namespace.Mark(ns); err == nil && m == markPrefix+name {
			out = append(out, ns)
		}
	}
	return out, nil
}
