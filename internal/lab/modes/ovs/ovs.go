// Package ovs is Docker's bridge mode with Open vSwitch in place of the
// Linux bridge (Bryzgalov 2014): each server host runs its own ovsdb-server and
// ovs-vswitchd, the container's veth is a port of an OVS bridge whose
// internal port holds the gateway address, and published ports reach the
// container through DNAT as in the bridge mode. The bridge uses Open
// vSwitch's user-space (netdev) datapath by design, whatever the kernel
// carries: no kernel module is loaded or needed, and every packet through
// the bridge crosses ovs-vswitchd. Open vSwitch's kernel datapath, which
// Bryzgalov measured, is not built.
package ovs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/poll"
)

const (
	bridge = "ovsbr0"
	schema = "/usr/share/openvswitch/vswitch.ovsschema"
)

// Mode is the ovs mode.
type Mode struct{}

func (Mode) Name() string { return "ovs" }
func (Mode) Summary() string {
	return "container on an Open vSwitch bridge (user-space netdev datapath by design, not the kernel's), published port (DNAT): bridge mode with OVS"
}

// Available says in one line why the mode cannot run here (nil when it can).
func Available() error {
	var missing []string
	for _, b := range []string{"ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovsdb-tool", "ethtool"} {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if _, err := os.Stat(schema); err != nil {
		missing = append(missing, schema)
	}
	if len(missing) > 0 {
		return fmt.Errorf("mode ovs: %s missing (apt-get install openvswitch-switch; scripts/install-deps.sh ovs does)", strings.Join(missing, ", "))
	}
	return nil
}

// Build starts Open vSwitch on every host that carries endpoints and puts
// each endpoint's container on a port of its host's OVS bridge.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	state, err := nb.StateDir()
	if err != nil {
		return nil, err
	}
	b := nb.Net()
	var eps []lab.Endpoint
	for _, e := range nb.Endpoints {
		h := e.Host
		dir := filepath.Join(state, h.Name)
		vsctl := func(args ...string) error {
			return netdev.Run(h.NS, "ovs-vsctl", append([]string{"--db=unix:" + filepath.Join(dir, "db.sock"), "--timeout=10"}, args...)...)
		}
		if e.Slot == 0 {
			if err := startOVS(nb, h, dir); err != nil {
				return nil, err
			}
			if err := vsctl("add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev"); err != nil {
				return nil, err
			}
		}
		ctr := nb.NS(e)
		if err := nb.CreateNS(ctr); err != nil {
			return nil, err
		}
		port := lab.Dev("vethovs", e.Slot)
		if err := b.Veth(h.NS, port, "", ctr, "eth0", nb.MTU()); err != nil {
			return nil, err
		}
		if err := vsctl("add-port", bridge, port); err != nil {
			return nil, err
		}
		// The netdev datapath does not complete checksums a veth leaves to
		// the hardware: without this, TCP between the ports fails.
		if err := netdev.Run(h.NS, "ethtool", "-K", port, "tx", "off"); err != nil {
			return nil, err
		}
		if err := netdev.Run(ctr, "ethtool", "-K", "eth0", "tx", "off"); err != nil {
			return nil, err
		}
		nb.KeepOffloadsOff(h.NS, port)
		nb.KeepOffloadsOff(ctr, "eth0")
		gw, _, subnet := lab.HostBridge(h.Index)
		if e.Slot == 0 {
			if err := b.Addr(h.NS, bridge, gw); err != nil {
				return nil, err
			}
			if err := netdev.Run(h.NS, "ip", "link", "set", bridge, "up"); err != nil {
				return nil, err
			}
		}
		ip := lab.SlotIP(h.Index, e.Slot)
		if err := b.Addr(ctr, "eth0", ip.String()+"/24"); err != nil {
			return nil, err
		}
		if err := b.DefaultRoute(ctr, lab.IP(gw)); err != nil {
			return nil, err
		}
		if e.Slot == 0 {
			if err := b.PublishChains(h.NS, bridge, subnet, nb.Several()); err != nil {
				return nil, err
			}
		}
		if err := b.PublishTo(h.NS, bridge, ip, e.Shift, nb.Several(), nb.Publish...); err != nil {
			return nil, err
		}
		addr := lab.HostPort(h.Addr, e.Port(nb.Port))
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", e.Port(nb.Port)), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0", "iptables DNAT/MASQUERADE", h.Name + ":" + bridge + " (OVS internal port)",
				"ovs-vswitchd (netdev datapath, user space)", h.Name + ":" + port, "container:eth0"},
		})
	}
	return eps, nil
}

// startOVS creates the host's OVS database and starts ovsdb-server and
// ovs-vswitchd in its namespace, their files in dir, and waits for them.
func startOVS(nb *netns.Build, h lab.Host, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	db := filepath.Join(dir, "conf.db")
	if out, err := exec.Command("ovsdb-tool", "create", db, schema).CombinedOutput(); err != nil {
		return fmt.Errorf("ovsdb-tool create: %v: %s", err, strings.TrimSpace(string(out)))
	}
	// Everything OVS writes goes to dir, not /var/run/openvswitch.
	env := []string{"OVS_RUNDIR=" + dir, "OVS_LOGDIR=" + dir, "OVS_DBDIR=" + dir}
	sock := "unix:" + filepath.Join(dir, "db.sock")
	if _, err := nb.StartCommand("ovsdb-"+h.Name, h.NS, nil, []string{"ovsdb-server", db, "--remote=p" + sock,
		"--unixctl=" + filepath.Join(dir, "ovsdb.ctl"), "--log-file=" + filepath.Join(dir, "ovsdb.log")}, env, ""); err != nil {
		return err
	}
	if err := waitFile(filepath.Join(dir, "db.sock"), 10*time.Second); err != nil {
		return fmt.Errorf("ovsdb-server on %s: %w", h.Name, err)
	}
	if err := netdev.Run(h.NS, "ovs-vsctl", "--db="+sock, "--no-wait", "init"); err != nil {
		return err
	}
	// The routers' CPU condition applies to the datapath too.
	_, err := nb.StartCommand("ovs-vswitchd-"+h.Name, h.NS, nb.Conditions.RouterCPUs(), []string{"ovs-vswitchd", sock,
		"--unixctl=" + filepath.Join(dir, "vswitchd.ctl"), "--log-file=" + filepath.Join(dir, "vswitchd.log")}, env, "")
	return err
}

func waitFile(path string, within time.Duration) error {
	err := poll.Until(context.Background(), within, 20*time.Millisecond, func() (bool, error) {
		_, err := os.Stat(path)
		return err == nil, nil
	})
	if err != nil {
		return errors.New(path + " did not appear")
	}
	return nil
}
