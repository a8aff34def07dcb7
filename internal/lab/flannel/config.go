package flannel

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/cnperf/cnperf/internal/lab/process"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Config is Flannel's network configuration, as etcd holds it under
// PREFIX/config (or kube-flannel's net-conf.json): the network the hosts'
// subnets are leased from, their size and range, and the backend.
type Config struct {
	Network   string  `json:"Network"`
	SubnetLen int     `json:"SubnetLen"`
	SubnetMin string  `json:"SubnetMin,omitempty"`
	SubnetMax string  `json:"SubnetMax,omitempty"`
	Backend   Backend `json:"Backend"`
}

// Backend is the configuration's backend: its type, and for VXLAN the
// underlay MTU it subtracts its 50 bytes from (0: the NIC's).
type Backend struct {
	Type string `json:"Type"`
	MTU  int    `json:"MTU,omitempty"`
}

// Check refuses a configuration Flannel would refuse or that would lease
// nothing: a network that is not IPv4, subnets not inside it or not
// larger than it, a range out of order, a backend cnperf does not run.
func (c Config) Check() error {
	nw, err := netip.ParsePrefix(c.Network)
	if err != nil || !nw.Addr().Is4() || nw.Masked() != nw {
		return fmt.Errorf("flannel config: network %q is not an IPv4 network", c.Network)
	}
	if c.SubnetLen <= nw.Bits() || c.SubnetLen > 30 {
		return fmt.Errorf("flannel config: subnet length %d must be longer than the network's /%d and at most 30", c.SubnetLen, nw.Bits())
	}
	var lo, hi netip.Addr
	for _, f := range []struct {
		v string
		a *netip.Addr
	}{{c.SubnetMin, &lo}, {c.SubnetMax, &hi}} {
		if f.v == "" {
			continue
		}
		a, err := netip.ParseAddr(f.v)
		if err != nil || !nw.Contains(a) || netip.PrefixFrom(a, c.SubnetLen).Masked().Addr() != a {
			return fmt.Errorf("flannel config: %q is not a /%d subnet of %s", f.v, c.SubnetLen, c.Network)
		}
		*f.a = a
	}
	if lo.IsValid() && hi.IsValid() && hi.Less(lo) {
		return fmt.Errorf("flannel config: SubnetMax %s is below SubnetMin %s", hi, lo)
	}
	switch c.Backend.Type {
	case VXLAN, UDP, HostGW:
	default:
		return fmt.Errorf("flannel config: backend %q (cnperf runs %s, %s, %s)", c.Backend.Type, VXLAN, UDP, HostGW)
	}
	if c.Backend.MTU != 0 && c.Backend.Type != VXLAN {
		return fmt.Errorf("flannel config: only the %s backend takes an MTU", VXLAN)
	}
	return nil
}

// Leases is how many subnets the configuration's range holds.
func (c Config) Leases() int {
	lo, err1 := netip.ParseAddr(c.SubnetMin)
	hi, err2 := netip.ParseAddr(c.SubnetMax)
	if err1 != nil || err2 != nil || !lo.Is4() || !hi.Is4() {
		return 0
	}
	a, b := lo.As4(), hi.As4()
	span := (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) -
		(uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]))
	return int(span>>(32-c.SubnetLen)) + 1
}

// JSON is the configuration as Flannel reads it.
func (c Config) JSON() []byte {
	b, _ := json.Marshal(c) // strings and ints only: cannot fail
	return b
}

// DefaultPrefix is flanneld's default --etcd-prefix; the configuration is
// PREFIX/config.
const DefaultPrefix = "/coreos.com/network"

// Dialer dials like net.Dialer.DialContext (namespace.Dialer: from inside
// a lab's namespace).
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// EtcdPut writes key = value into the etcd v3 server at endpoint
// (http://ADDR:PORT) through its JSON gateway (POST /v3/kv/put, key and
// value in base64), dialling with dial: no etcd client library for one
// write.
func EtcdPut(ctx context.Context, dial Dialer, endpoint, key string, value []byte) error {
	body, _ := json.Marshal(map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString(value),
	})
	c := &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}, Timeout: 5 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/v3/kv/put", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd put %s: %s: %s", key, resp.Status, process.LastLine(answer))
	}
	return nil
}
