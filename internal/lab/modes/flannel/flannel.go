// Package flannel runs the real Flannel (flanneld, pinned and built by
// scripts/flannel-build.sh) as Zismer (2016) set it up beside Docker: an
// etcd holds the network configuration, one flanneld per host, in that
// host's namespace, leases the host's subnet and writes it to subnet.env,
// and the host's containers sit on a bridge (docker0) holding the
// subnet's first address with the MTU flanneld gave, as Docker's
// `--bip=$FLANNEL_SUBNET --mtu=$FLANNEL_MTU` made it. Published ports reach
// them by DNAT as with Docker's bridge. Three backends: vxlan (the kernel's
// VXLAN device flannel.1, UDP 8472), udp (a TUN, flannel0, and flanneld's
// own C proxy on UDP 8285: every packet crosses user space) and host-gw
// (no encapsulation: routes to each host's subnet via that host, so the
// hosts must share a link). cnperf's `overlay` and `overlay-userspace` are
// its own stand-ins for the first two.
package flannel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnperf/cnperf/internal/lab"
	fl "github.com/cnperf/cnperf/internal/lab/flannel"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
)

const (
	bridge   = "docker0"
	etcdPort = 2379
	// udpPort is the udp backend's port: flannel's default, which the
	// configuration leaves as it is.
	udpPort = 8285
	// vxlanOverhead is VXLAN's header over IPv4, which flannel takes off
	// the backend's MTU for flannel.1.
	vxlanOverhead = 50
	// within bounds each daemon's start: etcd answering, a flanneld's
	// lease (flanneld retries etcd every second).
	within = 30 * time.Second
)

// Mode is one of Flannel's backends as a mode.
type Mode struct{ Backend string }

// Modes returns the three backends' modes.
func Modes() []lab.Mode {
	return []lab.Mode{Mode{fl.VXLAN}, Mode{fl.UDP}, Mode{fl.HostGW}}
}

func (m Mode) Name() string { return "flannel-" + m.Backend }

func (m Mode) Summary() string {
	switch m.Backend {
	case fl.UDP:
		return "the real Flannel " + fl.Version + ", udp backend (TUN and flanneld's proxy in user space, UDP 8285), etcd; published ports (DNAT)"
	case fl.HostGW:
		return "the real Flannel " + fl.Version + ", host-gw backend (routes via each host, no encapsulation), etcd; published ports (DNAT)"
	}
	return "the real Flannel " + fl.Version + ", vxlan backend (kernel VXLAN, UDP 8472), etcd; published ports (DNAT)"
}

// Needs wants the flanneld build and an etcd.
func (m Mode) Needs() error {
	if _, err := fl.Binary(); err != nil {
		return fmt.Errorf("mode %s: %w", m.Name(), err)
	}
	if _, err := fl.Etcd(); err != nil {
		return fmt.Errorf("mode %s: %w", m.Name(), err)
	}
	return nil
}

// NoChain: none of the backends runs on a chain of hosts (no
// ChainRouting: netns.CheckChainMode refuses, with this reason).
func (m Mode) NoChain() string {
	if m.Backend == fl.HostGW {
		return "host-gw routes via each other host, so every host must share one link"
	}
	return "flanneld binds its backend to one NIC (--iface), and a chained host has two, its address on the loopback"
}

// config is the network configuration etcd holds for the lab.
func (m Mode) config(nb *lab.Build) fl.Config {
	c := fl.Config{Network: lab.FlannelNetwork, SubnetLen: 24, SubnetMin: lab.FlannelSubnetMin, SubnetMax: lab.FlannelSubnetMax,
		Backend: fl.Backend{Type: m.Backend}}
	if m.Backend == fl.VXLAN && nb.Conditions.OverlayMTU > 0 {
		// Flannel's vxlan MTU is the underlay's it subtracts from.
		c.Backend.MTU = nb.Conditions.OverlayMTU + vxlanOverhead
	}
	return c
}

// check refuses, before anything starts, what the mode cannot build.
func (m Mode) check(nb *lab.Build) error {
	if nb.Conditions.OverlayMTU > 0 && m.Backend != fl.VXLAN {
		return fmt.Errorf("overlay_mtu: flannel's %s backend sets its own MTU (the NIC's less its header); only flannel-vxlan takes one", m.Backend)
	}
	if len(nb.Hosts) > lab.FlannelHosts {
		return fmt.Errorf("%s: %d hosts carry containers; Flannel's network here leases at most %d subnets", m.Name(), len(nb.Hosts), lab.FlannelHosts)
	}
	if len(nb.Hosts) == 0 {
		return fmt.Errorf("%s: no host carries a container", m.Name())
	}
	return m.config(nb).Check()
}

// Build starts Flannel (start) and puts each endpoint's container on its
// host's bridge, at the lease's addresses (.1 the bridge, .2 slot 0, .3
// slot 1, ...), and publishes its ports.
func (m Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	envs, rec, err := m.start(nb.Build, false)
	if err != nil {
		return nil, err
	}
	eps, err := nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) { return m.container(nb, e, envs[e.Host.Name]) })
	if err != nil {
		return nil, err
	}
	nb.Record().Flannel = rec
	return eps, nil
}

// start starts etcd on the first host that carries containers, writes the
// network configuration, starts a flanneld on every host with containers
// and waits for each one's lease, and returns the leases by host and what
// run.json records. With docker set, flanneld masquerades traffic leaving
// Flannel's network and adds its FORWARD rules, as beside a dockerd
// started with --ip-masq=false, whose FORWARD policy drops.
func (m Mode) start(lb *lab.Build, docker bool) (map[string]fl.SubnetEnv, *record.Flannel, error) {
	if err := m.check(lb); err != nil {
		return nil, nil, err
	}
	if err := m.Needs(); err != nil {
		return nil, nil, err
	}
	flanneld, _ := fl.Binary()
	etcd, _ := fl.Etcd()
	version, err := fl.BinaryVersion(flanneld)
	if err != nil {
		return nil, nil, err
	}
	state, err := lb.StateDir()
	if err != nil {
		return nil, nil, err
	}
	cfg := m.config(lb)
	endpoint, err := startEtcd(lb, etcd, lb.Hosts[0], state, cfg)
	if err != nil {
		return nil, nil, err
	}
	// StartCommand keeps the lab's processes: one host after the other.
	logs := map[string]string{}
	for _, h := range lb.Hosts {
		dir := filepath.Join(state, h.Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, err
		}
		// On the netns driver --ip-masq and the FORWARD rules are off:
		// the bridge's DNAT and masquerade are Docker's layout
		// (netdev.PublishChains), the overlay's traffic is kept out of
		// them (NATExempt), and the namespaces' FORWARD policy accepts;
		// flanneld would otherwise rewrite its rules every 5 s beside the
		// measurement. No health server.
		masq := fmt.Sprint(docker)
		argv := []string{flanneld, "--etcd-endpoints=" + endpoint, "--etcd-prefix=" + fl.DefaultPrefix, "--iface=eth0",
			"--subnet-file=" + filepath.Join(dir, "subnet.env"), "--ip-masq=" + masq, "--iptables-forward-rules=" + masq, "--healthz-port=0"}
		// The udp backend's proxy is the datapath: the routers' CPU
		// condition applies to it, as to cnperf's own overlay router.
		var cpus []int
		if m.Backend == fl.UDP {
			cpus = lb.Conditions.RouterCPUs()
		}
		log, err := lb.StartCommand("flanneld-"+h.Name, h.NS, cpus, argv, nil, filepath.Join(dir, "flanneld.log"))
		if err != nil {
			return nil, nil, fmt.Errorf("host %s: start flanneld: %w", h.Name, err)
		}
		logs[h.Name] = log
	}
	envs := map[string]fl.SubnetEnv{}
	for _, h := range lb.Hosts {
		env, err := waitLease(lb, h, filepath.Join(state, h.Name, "subnet.env"), logs[h.Name])
		if err != nil {
			return nil, nil, err
		}
		envs[h.Name] = env
	}
	rec := &record.Flannel{Version: version, Backend: m.Backend, Network: cfg.Network, Etcd: endpoint}
	for _, h := range lb.Hosts {
		env := envs[h.Name]
		if rec.MTU != 0 && env.MTU != rec.MTU {
			return nil, nil, fmt.Errorf("host %s: flanneld gave MTU %d, host %s's gave %d", h.Name, env.MTU, lb.Hosts[0].Name, rec.MTU)
		}
		rec.MTU = env.MTU
		rec.Leases = append(rec.Leases, record.FlannelLease{Host: h.Name, Subnet: env.Lease().String()})
	}
	switch m.Backend {
	case fl.VXLAN:
		if rec.Port, rec.VNI, err = vxlanDevice(lb.Hosts[0].NS); err != nil {
			return nil, nil, fmt.Errorf("host %s: %w", lb.Hosts[0].Name, err)
		}
	case fl.UDP:
		rec.Port = udpPort
	}
	return envs, rec, nil
}

// container puts the endpoint's container on its host's bridge at its
// slot's address of the lease, and publishes its ports there.
func (m Mode) container(nb *netns.Build, e lab.EndpointAt, env fl.SubnetEnv) (lab.Endpoint, error) {
	h, b := e.Host, nb.Net()
	ctr := nb.NS(e)
	if err := nb.CreateNS(ctr); err != nil {
		return lab.Endpoint{}, err
	}
	lease := env.Lease()
	ip := lease.Addr()
	for range 2 + e.Slot {
		ip = ip.Next()
	}
	if !lease.Contains(ip) || ip == lastAddr(lease) {
		return lab.Endpoint{}, fmt.Errorf("slot %d: the lease %s has no address left", e.Slot, lease)
	}
	veth := lab.Dev("vethfl", e.Slot)
	if err := b.BridgedContainer(h.NS, bridge, veth, ctr, "eth0", env.Subnet.String(),
		netip.PrefixFrom(ip, lease.Bits()).String(), env.MTU, true); err != nil {
		return lab.Endpoint{}, err
	}
	ctrIP := net.IP(ip.AsSlice())
	if e.Slot == 0 {
		// Container to container traffic keeps its addresses across the
		// overlay (Flannel's own masquerade rules exempt it so too).
		if err := b.NATExempt(h.NS, lease.String(), lab.FlannelNetwork); err != nil {
			return lab.Endpoint{}, err
		}
		if err := b.PublishChains(h.NS, bridge, lease.String(), nb.Several()); err != nil {
			return lab.Endpoint{}, err
		}
	}
	if err := b.PublishTo(h.NS, bridge, ctrIP, e.Shift, nb.Several(), nb.Publish...); err != nil {
		return lab.Endpoint{}, err
	}
	p := e.Port(nb.Port)
	return lab.Endpoint{
		Host: h.Name, NS: ctr, Container: true,
		Listen:   lab.HostPort("0.0.0.0", p),
		External: lab.HostPort(h.Addr, p),
		Internal: lab.HostPort(ip.String(), p),
		Path:     append([]string{"container:eth0", h.Name + ":" + veth, h.Name + ":" + bridge}, m.hostPath(h.Name)...),
	}, nil
}

// hostPath is what a packet to another host's container crosses after
// the bridge.
func (m Mode) hostPath(host string) []string {
	switch m.Backend {
	case fl.UDP:
		return []string{host + ":flannel0 (TUN)", "flanneld (udp proxy, user space, UDP 8285)", host + ":eth0"}
	case fl.HostGW:
		return []string{host + ":eth0 (routed to the other host)"}
	}
	return []string{host + ":flannel.1 (VXLAN)", host + ":eth0"}
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= 1<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// startEtcd starts etcd in h's namespace, its data in state/etcd,
// listening on h's underlay address and the namespace's loopback, writes
// the configuration through it, and returns its client URL.
func startEtcd(nb *lab.Build, bin string, h lab.Host, state string, cfg fl.Config) (string, error) {
	data := filepath.Join(state, "etcd")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return "", err
	}
	endpoint := fmt.Sprintf("http://%s", lab.HostPort(h.Addr, etcdPort))
	peer := "http://127.0.0.1:2380"
	argv := []string{bin, "--name=cnperf", "--data-dir=" + filepath.Join(data, "data"),
		"--listen-client-urls=" + endpoint + ",http://127.0.0.1:2379", "--advertise-client-urls=" + endpoint,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer, "--initial-cluster=cnperf=" + peer,
		"--log-level=warn"}
	log, err := nb.StartCommand("etcd", h.NS, nil, argv, nil, filepath.Join(data, "etcd.log"))
	if err != nil {
		return "", fmt.Errorf("host %s: start etcd: %w", h.Name, err)
	}
	// Written as soon as etcd answers: the write is the readiness check.
	dial := fl.Dialer(namespace.Dialer(h.NS))
	key := fl.DefaultPrefix + "/config"
	var last error
	err = poll.Until(context.Background(), within, 100*time.Millisecond, func() (bool, error) {
		if p := nb.Process("etcd"); p != nil {
			if done, _ := p.Exited(); done {
				return false, errors.New("exited")
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		last = fl.EtcdPut(ctx, dial, "http://127.0.0.1:2379", key, cfg.JSON())
		return last == nil, nil
	})
	if err != nil {
		if errors.Is(err, poll.ErrTimeout) && last != nil {
			err = fmt.Errorf("did not take the configuration within %s (%v)", within, last)
		}
		return "", fmt.Errorf("host %s: etcd %v: %s", h.Name, err, process.LastLogLine(log))
	}
	return endpoint, nil
}

// waitLease waits for h's flanneld to write its subnet.env, and reads it;
// a flanneld that exits or leases nothing in time fails the lab with its
// last log line.
func waitLease(nb *lab.Build, h lab.Host, path, log string) (fl.SubnetEnv, error) {
	var env fl.SubnetEnv
	var last error
	err := poll.Until(context.Background(), within, 50*time.Millisecond, func() (bool, error) {
		if p := nb.Process("flanneld-" + h.Name); p != nil {
			if done, _ := p.Exited(); done {
				return false, errors.New("exited")
			}
		}
		var err error
		env, err = fl.ReadSubnetEnv(path)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		last = err // a half-written file is read again
		return err == nil, nil
	})
	if err != nil {
		if errors.Is(err, poll.ErrTimeout) {
			err = fmt.Errorf("leased no subnet within %s", within)
			if last != nil {
				err = fmt.Errorf("wrote a subnet.env cnperf cannot read (%v)", last)
			}
		}
		return env, fmt.Errorf("host %s: flanneld %v: %s", h.Name, err, process.LastLogLine(log))
	}
	return env, nil
}

// vxlanDevice reads flannel.1's UDP port and VNI from the kernel: what
// flannel made, not what its defaults say.
func vxlanDevice(ns string) (port, vni int, err error) {
	hd, err := namespace.Handle(ns)
	if err != nil {
		return 0, 0, err
	}
	defer hd.Close()
	l, err := hd.LinkByName("flannel.1")
	if err != nil {
		return 0, 0, fmt.Errorf("flannel's VXLAN device: %w", err)
	}
	v, ok := l.(*netlink.Vxlan)
	if !ok {
		return 0, 0, fmt.Errorf("flannel.1 is a %s, not a VXLAN device", l.Type())
	}
	return v.Port, v.VxlanId, nil
}
