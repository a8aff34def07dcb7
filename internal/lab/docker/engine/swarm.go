package engine

import (
	"net"
	"sort"

	"github.com/docker/docker/api/types/swarm"
)

// Swarm control traffic (2377), gossip (7946) and VXLAN (4789) all run over
// the hosts' underlay addresses; overlay and ingress subnets come from
// SwarmPool, not Docker's 10.0.0.0/8 default.
// A remote engine listens on all its addresses: its machine's address
// as cnperf reaches it may be another's (NAT).
func swarmInit(addr string, remote bool) swarm.InitRequest {
	return swarm.InitRequest{
		ListenAddr:      listenAddr(addr, remote),
		AdvertiseAddr:   addr,
		DefaultAddrPool: []string{SwarmPool},
		SubnetSize:      PoolSize,
	}
}

func swarmJoin(addr, manager, token string, remote bool) swarm.JoinRequest {
	return swarm.JoinRequest{
		ListenAddr:    listenAddr(addr, remote),
		AdvertiseAddr: addr,
		RemoteAddrs:   []string{net.JoinHostPort(manager, "2377")},
		JoinToken:     token,
	}
}

func listenAddr(addr string, remote bool) string {
	if remote {
		addr = "0.0.0.0"
	}
	return net.JoinHostPort(addr, "2377")
}

// remoteManagers lists a node's managers' addresses, sorted: nodes of one
// swarm list the same.
func remoteManagers(peers []swarm.Peer) []string {
	var out []string
	for _, p := range peers {
		out = append(out, p.Addr)
	}
	sort.Strings(out)
	return out
}
