package grid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/olric-data/olric"
	"github.com/olric-data/olric/config"
)

// The storage member's limits. Olric's defaults (1 MiB tables for each of
// 271 partitions, compaction every 10 minutes) would take gigabytes in a
// five-minute run of removes and puts; these keep it in tens of MB.
const (
	partitionCount     = 71       // prime, as Olric's 271 and Coherence's 257
	tableSize          = 64 << 10 // bytes of a partition's first storage table
	maxKeys            = 100_000  // per map; older keys are evicted (LRU)
	maxInuse           = 64 << 20 // bytes of entries per map
	compactionInterval = time.Second
	// MaxMemory is the server's hard bound: above it the member stops
	// with an error rather than grow (whatever clients send, such as many
	// maps or huge values); the Go runtime collects hard below it.
	MaxMemory   = 512 << 20
	softMemory  = 384 << 20
	memoryCheck = 50 * time.Millisecond
	mapName     = "cnperf-grid"
)

// GossipPort is where the member's gossip (memberlist, TCP and UDP)
// listens: the next port after the grid's.
func GossipPort(port int) int { return port + 1 }

// Serve runs one storage member of an Olric grid on addr (HOST:PORT; its
// gossip on the next port, same host) until ctx ends. An empty or
// unspecified host means this namespace's address (see bindIP): members
// tell clients where they are, so they need a concrete one. The member's
// gossip is encrypted with a key of its own (newGossipKey): it is a grid
// of one that nothing else can join.
func Serve(ctx context.Context, addr string, logw io.Writer) error {
	key, err := newGossipKey()
	if err != nil {
		return err
	}
	return serve(ctx, addr, key, logw)
}

// serve is Serve with the grid's gossip key.
func serve(ctx context.Context, addr string, key []byte, logw io.Writer) error {
	c, err := memberConfig(addr, key, logw)
	if err != nil {
		return err
	}
	ml := c.MemberlistConfig
	gt, err := newGossipTransport(ml.BindAddr, ml.BindPort, c.Logger)
	if err != nil {
		return fmt.Errorf("grid member: %w", err)
	}
	ml.Transport = gt
	debug.SetMemoryLimit(softMemory)
	started := make(chan struct{})
	c.Started = func() { close(started) }
	db, err := olric.New(c)
	if err != nil {
		_ = gt.Shutdown()
		return fmt.Errorf("grid member on %s: %w", addr, err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Start() }()
	select {
	case err := <-done:
		_ = gt.Shutdown()
		return fmt.Errorf("grid member on %s:%d: %w", c.BindAddr, c.BindPort, err)
	case <-started:
		fmt.Fprintf(logw, "cnperf serve grid: storage member on %s:%d, gossip (encrypted, its own key) on %s:%d\n", c.BindAddr, c.BindPort,
			c.MemberlistConfig.BindAddr, c.MemberlistConfig.BindPort)
	case <-ctx.Done():
	}
	werr := watchMemory(ctx, done)
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.Shutdown(sctx); err != nil && werr == nil {
		werr = fmt.Errorf("grid member: shut down: %w", err)
	}
	_ = gt.Shutdown() // memberlist's shutdown did, unless it never started
	return werr
}

// watchMemory waits for ctx or the member's end, and fails when the heap
// passes MaxMemory.
func watchMemory(ctx context.Context, done <-chan error) error {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	tick := time.NewTicker(memoryCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			return fmt.Errorf("grid member stopped: %w", err)
		case <-tick.C:
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > MaxMemory {
				return fmt.Errorf("grid member: heap of %d MB above its bound of %d MB: stopped", v>>20, MaxMemory>>20)
			}
		}
	}
}

// memberConfig is the storage member's Olric configuration: one member,
// one replica, bounded maps, no peers (so no DNS, no multicast), gossip
// encrypted with key and refused unencrypted both ways, logging warnings
// and errors to logw. Its errors are the user's bad --listen.
func memberConfig(addr string, key []byte, logw io.Writer) (*config.Config, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT", addr) // err repeats addr unquoted
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65534 {
		return nil, fmt.Errorf("--listen %q: the port must be 1..65534 (gossip takes the next one)", addr)
	}
	ip, err := bindIP(host)
	if err != nil {
		return nil, err
	}
	ml, err := config.NewMemberlistConfig("lan")
	if err != nil {
		return nil, err
	}
	ml.BindAddr, ml.BindPort = ip.String(), GossipPort(port)
	ml.AdvertiseAddr, ml.AdvertisePort = ip.String(), GossipPort(port)
	ml.SecretKey, ml.GossipVerifyIncoming, ml.GossipVerifyOutgoing = key, true, true
	engine := config.NewEngine()
	engine.Config["tableSize"] = uint64(tableSize)
	lg := log.New(logw, "grid ", log.LstdFlags)
	return &config.Config{
		BindAddr: ip.String(), BindPort: port, MemberlistConfig: ml,
		PartitionCount: partitionCount, ReplicaCount: 1, ReadQuorum: 1, WriteQuorum: 1, MemberCountQuorum: 1,
		LogLevel: config.LogLevelWarn, LogVerbosity: 1, LogOutput: logw, Logger: lg,
		DMaps: &config.DMaps{Engine: engine, MaxKeys: maxKeys, MaxInuse: maxInuse, EvictionPolicy: config.LRUEviction,
			TriggerCompactionInterval: compactionInterval, CheckEmptyFragmentsInterval: compactionInterval},
	}, nil
}

// bindIP is the address the member binds and announces: the host given,
// or for none (every interface, as the runner passes inside a lab's
// namespaces, where only lab addresses exist) the first global unicast
// address of an interface that is up, else loopback. Every spelling of an
// unspecified address ([::0], [0:0:0:0:0:0:0:0], 0.0.0.0) is none: the
// member never binds every interface nor announces one. An IPv6 spelling
// ([::], as the runner passes on a lab with IPv6, whose clients dial IPv6)
// prefers an IPv6 address, the others an IPv4 one; either takes the other
// family when its own has none.
func bindIP(host string) (netip.Addr, error) {
	switch host {
	case "localhost":
		return netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
	case "":
		return firstAddress(false)
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		return netip.Addr{}, fmt.Errorf("--listen host %q: not an IP address (or localhost)", host)
	case ip.Zone() != "":
		return netip.Addr{}, fmt.Errorf("--listen host %q: an address with a zone cannot be announced to clients", host)
	}
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified():
		return firstAddress(ip.Is6())
	case ip.IsMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return netip.Addr{}, fmt.Errorf("--listen host %q: a multicast or broadcast address; want one of this host's", host)
	}
	return ip, nil
}

// firstAddress is the first global unicast address of an interface that
// is up, of IPv6 when want6 is set else IPv4, or of the other family when
// there is none; loopback when there is neither.
func firstAddress(want6 bool) (netip.Addr, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("list interfaces: %w", err)
	}
	var other netip.Addr
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			p, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(p.IP)
			if ip = ip.Unmap(); !ok || !ip.IsGlobalUnicast() {
				continue
			}
			if ip.Is6() == want6 {
				return ip, nil
			}
			if !other.IsValid() {
				other = ip
			}
		}
	}
	if other.IsValid() {
		return other, nil
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
}

// clusterStore is the client's side: an Olric cluster client, which
// stores nothing, so every operation crosses the network to the member.
type clusterStore struct {
	cl *olric.ClusterClient
	dm olric.DMap
}

// Dial joins the grid at addr as a client, retrying while the member
// starts (it listens before it has joined its own cluster) until timeout.
// Every connection goes to addr, whatever address the member announces:
// behind NAT (published ports) only addr reaches it.
func Dial(ctx context.Context, addr string, opTimeout, timeout time.Duration, logw io.Writer) (Store, func(), error) {
	cc := config.NewClient()
	cc.DialTimeout, cc.ReadTimeout, cc.WriteTimeout = opTimeout, opTimeout, opTimeout
	cc.PoolTimeout = opTimeout
	cc.MaxRetries = -1 // a failed operation is counted, not retried unseen
	cc.PoolSize = 4
	cc.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: opTimeout}).DialContext(ctx, network, addr)
	}
	lg := log.New(logw, "grid client ", log.LstdFlags)
	deadline := time.Now().Add(timeout)
	for {
		cl, err := olric.NewClusterClient([]string{addr}, olric.WithConfig(cc), olric.WithLogger(lg))
		if err == nil {
			dm, err := cl.NewDMap(mapName)
			if err != nil {
				_ = cl.Close(ctx)
				return nil, nil, fmt.Errorf("grid at %s: map: %w", addr, err)
			}
			closeFn := func() { _ = cl.Close(context.Background()) }
			return &clusterStore{cl: cl, dm: dm}, closeFn, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("grid at %s: join as a client: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *clusterStore) Put(ctx context.Context, key string, value []byte) error {
	return s.dm.Put(ctx, key, value)
}

func (s *clusterStore) Remove(ctx context.Context, key string) error {
	_, err := s.dm.Delete(ctx, key)
	if errors.Is(err, olric.ErrKeyNotFound) {
		return nil // the previous put failed: nothing to remove
	}
	return err
}
