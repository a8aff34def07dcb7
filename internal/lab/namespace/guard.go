package namespace

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// labPrefixes are the ranges every lab address comes from: RFC 2544's
// benchmarking range and RFC 5180's IPv6 one.
var labPrefixes = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("2001:2::/48")}

// IsLabAddress reports whether ip is in a lab's address ranges.
func IsLabAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range labPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// labNamePrefix starts the name of every lab namespace (lab.Prefix).
const labNamePrefix = "cnperf-"

// InLab reports whether the calling thread is in one of the labs' named
// network namespaces, the only ones from which a lab address is reached
// without leaving the machine. (The machine's own namespace cannot be
// told by PID 1's, which a container may not read.)
func InLab() bool {
	var self unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &self); err != nil {
		return false
	}
	names, err := List(labNamePrefix)
	if err != nil {
		return false
	}
	for _, n := range names {
		var st unix.Stat_t
		if unix.Stat(Path(n), &st) == nil && st.Dev == self.Dev && st.Ino == self.Ino {
			return true
		}
	}
	return false
}

// RefuseLabFromMachine is a net.Dialer's Control: it refuses to connect to
// a lab address from anywhere but a lab's namespaces (from the machine's
// own, the connection would leave the machine), before any packet is
// sent. Engines at lab addresses, as the tests emulate other machines,
// are reached by a cnperf inside a lab.
func RefuseLabFromMachine(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		host, _, serr := net.SplitHostPort(address)
		if serr != nil {
			return nil
		}
		a, perr := netip.ParseAddr(host)
		if perr != nil {
			return nil
		}
		ap = netip.AddrPortFrom(a, 0)
	}
	if IsLabAddress(ap.Addr()) && !InLab() {
		return fmt.Errorf("%s is a lab address: cnperf dials it only from inside a lab's namespaces, never from elsewhere (from the machine's own it would leave the machine)", address)
	}
	return nil
}
