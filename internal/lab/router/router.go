// Package router is cnperf's user-space overlay router, one per emulated
// host, in two kinds:
//
//   - "udp" models Weave's sleeve mode (and the layout of Flannel's udp
//     backend, whose per-packet proxy runs for real as flannel-udp): the host
//     routes the other hosts' container subnets into a TUN device, the router
//     reads each packet, looks up the host owning its destination and sends
//     it to that host's router in a UDP datagram over the underlay; the peer
//     writes it to its own TUN. Every packet crosses user space twice.
//   - "wireguard" is the same overlay encrypted, with userspace WireGuard
//     (golang.zx2c4.com/wireguard as a library over the TUN), since this kernel
//     has neither WireGuard nor IPsec ESP.
//
// Both batch system calls where the kernel allows, alike: the TUN is opened
// with offloads (a TSO super-packet is read at once and split in user space,
// and written packets are coalesced with GRO), and the UDP side is
// wireguard-go's standard bind (sendmmsg/recvmmsg with UDP GSO and GRO).
// Each datagram carries one packet, as Flannel's backend does; Weave's
// sleeve also packs several small frames into one datagram, which this
// router does not model.
package router

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
)

// Kinds of router.
const (
	KindUDP       = "udp"
	KindWireGuard = "wireguard"
)

// Cipher is WireGuard's one cipher suite, recorded with a run.
const Cipher = "Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s (ChaCha20-Poly1305)"

// Config is one router's configuration; the mode that builds the lab
// writes it, and `cnperf serve overlay --config JSON` reads it.
type Config struct {
	Kind   string `json:"kind"`
	TUN    string `json:"tun"`    // device name
	MTU    int    `json:"mtu"`    // the TUN's MTU
	Listen string `json:"listen"` // underlay address:port the router's UDP socket binds
	// PrivateKey is the host's WireGuard key (hex), wireguard kind only.
	PrivateKey string `json:"private_key,omitempty"`
	Peers      []Peer `json:"peers"`
}

// Peer is another host's router: the container subnet behind it and where
// its router listens.
type Peer struct {
	Subnet    string `json:"subnet"`
	Endpoint  string `json:"endpoint"`
	PublicKey string `json:"public_key,omitempty"` // hex, wireguard kind only
}

// Validate checks a configuration.
func (c Config) Validate() error {
	if c.Kind != KindUDP && c.Kind != KindWireGuard {
		return fmt.Errorf("overlay router: kind %q (known: udp, wireguard)", c.Kind)
	}
	if c.TUN == "" || len(c.TUN) > 15 {
		return fmt.Errorf("overlay router: TUN name %q", c.TUN)
	}
	if c.MTU < 576 || c.MTU > 65535 {
		return fmt.Errorf("overlay router: MTU %d outside 576..65535", c.MTU)
	}
	if _, err := netip.ParseAddrPort(c.Listen); err != nil {
		return fmt.Errorf("overlay router: listen %q: %w", c.Listen, err)
	}
	if c.Kind == KindWireGuard {
		if _, err := keyBytes(c.PrivateKey); err != nil {
			return fmt.Errorf("overlay router: private key: %w", err)
		}
	}
	for i, p := range c.Peers {
		if _, err := netip.ParsePrefix(p.Subnet); err != nil {
			return fmt.Errorf("overlay router: peers[%d] subnet: %w", i, err)
		}
		if _, err := netip.ParseAddrPort(p.Endpoint); err != nil {
			return fmt.Errorf("overlay router: peers[%d] endpoint: %w", i, err)
		}
		if c.Kind == KindWireGuard {
			if _, err := keyBytes(p.PublicKey); err != nil {
				return fmt.Errorf("overlay router: peers[%d] public key: %w", i, err)
			}
		}
	}
	return nil
}

// JSON is the configuration as `cnperf serve overlay --config` takes it.
func (c Config) JSON() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// ParseConfig reads a JSON configuration and validates it.
func ParseConfig(s string) (Config, error) {
	var c Config
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return c, fmt.Errorf("overlay router: config: %w", err)
	}
	return c, c.Validate()
}

// NewKey returns a new X25519 private key and its public key, hex-encoded
// as WireGuard's configuration protocol takes them.
func NewKey() (private, public string, err error) {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	return hex.EncodeToString(k.Bytes()), hex.EncodeToString(k.PublicKey().Bytes()), nil
}

func keyBytes(h string) ([]byte, error) {
	b, err := hex.DecodeString(h)
	if err == nil && len(b) != 32 {
		err = errors.New("want 32 bytes")
	}
	return b, err
}

// Counters are what a router moved; they only grow.
type Counters struct {
	FromTUN  atomic.Uint64 // packets read from the TUN (containers' traffic out)
	ToPeers  atomic.Uint64 // datagrams sent to peers
	FromPeer atomic.Uint64 // datagrams received from peers
	ToTUN    atomic.Uint64 // packets written to the TUN
	NoRoute  atomic.Uint64 // packets for no peer's subnet, dropped
	// Relayed are packets from a peer sent on to another (a chain's
	// intermediate host); TTLExpired those dropped instead, their TTL out.
	Relayed    atomic.Uint64
	TTLExpired atomic.Uint64
}

func (c *Counters) String() string {
	return fmt.Sprintf("tun->peers %d packets (%d sent), peers->tun %d (%d written), %d without a route, %d relayed, %d TTL expired",
		c.FromTUN.Load(), c.ToPeers.Load(), c.FromPeer.Load(), c.ToTUN.Load(), c.NoRoute.Load(), c.Relayed.Load(), c.TTLExpired.Load())
}

// Run creates the TUN and routes until ctx ends. The caller's process must
// run in the host's network namespace. ready is called once the TUN exists
// (the lab then gives it its route).
func Run(ctx context.Context, c Config, cnt *Counters, logf func(string, ...any)) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Kind == KindWireGuard {
		return runWireGuard(ctx, c, logf)
	}
	return runUDP(ctx, c, cnt, logf)
}
