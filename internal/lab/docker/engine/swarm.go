package engine

import (
	"net"

	"github.com/docker/docker/api/types/swarm"
)

// Swarm control traffic (2377), gossip (7946) and VXLAN (4789) all run over
// the hosts' underlay addresses; overlay and ingress subnets come from
// SwarmPool, not Docker's 10.0.0.0/8 default.
func swarmInit(addr string) swarm.InitRequest {
	return swarm.InitRequest{
		ListenAddr:      net.JoinHostPort(addr, "2377"),
		AdvertiseAddr:   addr,
		DefaultAddrPool: []string{SwarmPool},
		SubnetSize:      PoolSize,
	}
}

func swarmJoin(addr, manager, token string) swarm.JoinRequest {
	return swarm.JoinRequest{
		ListenAddr:    net.JoinHostPort(addr, "2377"),
		AdvertiseAddr: addr,
		RemoteAddrs:   []string{net.JoinHostPort(manager, "2377")},
		JoinToken:     token,
	}
}
