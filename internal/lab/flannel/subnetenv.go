package flannel

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// SubnetEnv is what flanneld writes to its --subnet-file once it holds a
// lease: the network, this host's subnet with the address its bridge
// takes (FLANNEL_SUBNET is the subnet's first address with its length,
// e.g. 198.19.150.1/24), the MTU its containers must use, and whether
// flanneld masquerades.
type SubnetEnv struct {
	Network netip.Prefix // FLANNEL_NETWORK (invalid when absent)
	Subnet  netip.Prefix // FLANNEL_SUBNET: the bridge's address and the lease's length
	MTU     int          // FLANNEL_MTU
	IPMasq  bool         // FLANNEL_IPMASQ
}

// Lease is the leased subnet itself (198.19.150.0/24).
func (e SubnetEnv) Lease() netip.Prefix { return e.Subnet.Masked() }

// MaxSubnetEnv bounds the file: flanneld writes a few short lines.
const MaxSubnetEnv = 4096

// ParseSubnetEnv reads a subnet.env. It is a file a foreign daemon
// writes, so it is held to what flanneld writes: KEY=VALUE lines (blank
// lines and # comments pass, keys it does not know too, such as the IPv6
// ones), each known key once, FLANNEL_SUBNET and FLANNEL_MTU present, an
// IPv4 subnet inside the network, an MTU an IPv4 link can have.
func ParseSubnetEnv(b []byte) (SubnetEnv, error) {
	var e SubnetEnv
	if len(b) > MaxSubnetEnv {
		return e, fmt.Errorf("subnet.env: %d bytes; flanneld writes fewer than %d", len(b), MaxSubnetEnv)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || key == "" {
			return e, fmt.Errorf("subnet.env line %d: %q is not KEY=VALUE", n, trim(line))
		}
		switch key {
		case "FLANNEL_NETWORK", "FLANNEL_SUBNET", "FLANNEL_MTU", "FLANNEL_IPMASQ":
		default:
			continue
		}
		if seen[key] {
			return e, fmt.Errorf("subnet.env line %d: %s a second time", n, key)
		}
		seen[key] = true
		var err error
		switch key {
		case "FLANNEL_NETWORK":
			e.Network, err = netip.ParsePrefix(val)
			if err == nil && (!e.Network.Addr().Is4() || e.Network.Masked() != e.Network) {
				err = fmt.Errorf("not an IPv4 network")
			}
		case "FLANNEL_SUBNET":
			e.Subnet, err = netip.ParsePrefix(val)
			if err == nil && (!e.Subnet.Addr().Is4() || e.Subnet.Bits() > 30) {
				err = fmt.Errorf("not an IPv4 subnet of at least 4 addresses")
			}
		case "FLANNEL_MTU":
			e.MTU, err = strconv.Atoi(val)
			if err == nil && (e.MTU < 68 || e.MTU > 65535) {
				err = fmt.Errorf("not an MTU an IPv4 link can have (68..65535)")
			}
		case "FLANNEL_IPMASQ":
			e.IPMasq, err = strconv.ParseBool(val)
		}
		if err != nil {
			return SubnetEnv{}, fmt.Errorf("subnet.env line %d: %s=%q: %v", n, key, trim(val), err)
		}
	}
	if err := sc.Err(); err != nil {
		return SubnetEnv{}, fmt.Errorf("subnet.env: %w", err)
	}
	for _, k := range []string{"FLANNEL_SUBNET", "FLANNEL_MTU"} {
		if !seen[k] {
			return SubnetEnv{}, fmt.Errorf("subnet.env: no %s", k)
		}
	}
	if e.Network.IsValid() && (e.Subnet.Bits() < e.Network.Bits() || !e.Network.Contains(e.Subnet.Addr())) {
		return SubnetEnv{}, fmt.Errorf("subnet.env: subnet %s is not inside network %s", e.Subnet, e.Network)
	}
	return e, nil
}

// ReadSubnetEnv reads and parses the file at path.
func ReadSubnetEnv(path string) (SubnetEnv, error) {
	f, err := os.Open(path)
	if err != nil {
		return SubnetEnv{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSubnetEnv+1))
	if err != nil {
		return SubnetEnv{}, err
	}
	return ParseSubnetEnv(b)
}

func trim(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
