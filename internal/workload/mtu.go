package workload

import "net"

// LocalMTU is the MTU of the interface holding local address a (a connected
// socket's, so the route's interface); 0 when it cannot tell.
func LocalMTU(a net.Addr) int {
	ip := addrIP(a)
	if ip == nil || ip.IsUnspecified() {
		return 0
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return 0
	}
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, ad := range addrs {
			if n, ok := ad.(*net.IPNet); ok && n.IP.Equal(ip) {
				return ifc.MTU
			}
		}
	}
	return 0
}

// IPv6Extra is how many bytes more an IPv6 header takes than an IPv4 one
// (40 against 20).
const IPv6Extra = 20

// FitMTU is the MTU that sizes fitted to a path (DefaultPacketSize's
// mtu − 32, rr's fit_mtu) are taken from on the path a's socket leaves by:
// LocalMTU, less IPv6Extra when a is an IPv6 address, so that a payload
// sized for it leaves no fragments in either family. 0 when LocalMTU
// cannot tell.
func FitMTU(a net.Addr) int {
	mtu := LocalMTU(a)
	if mtu > 0 && addrIP(a).To4() == nil {
		return mtu - IPv6Extra
	}
	return mtu
}

// addrIP is a TCP or UDP address's IP; nil for another kind of address.
func addrIP(a net.Addr) net.IP {
	switch a := a.(type) {
	case *net.UDPAddr:
		return a.IP
	case *net.TCPAddr:
		return a.IP
	}
	return nil
}
