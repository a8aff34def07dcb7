package workload

import "net"

// LocalMTU is the MTU of the interface holding local address a (a connected
// socket's, so the route's interface); 0 when it cannot tell.
func LocalMTU(a net.Addr) int {
	var ip net.IP
	switch a := a.(type) {
	case *net.UDPAddr:
		ip = a.IP
	case *net.TCPAddr:
		ip = a.IP
	default:
		return 0
	}
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
