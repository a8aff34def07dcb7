package router

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/tun"
)

// runWireGuard is the wireguard kind: wireguard-go's device over the TUN,
// configured through its configuration protocol (what `wg set` sends).
func runWireGuard(ctx context.Context, c Config, logf func(string, ...any)) error {
	dev, err := tun.CreateTUN(c.TUN, c.MTU)
	if err != nil {
		return fmt.Errorf("create TUN %s: %w", c.TUN, err)
	}
	ap := netip.MustParseAddrPort(c.Listen)
	// The standard bind listens on every address of the namespace, which in
	// a lab host is its underlay address and loopback.
	wg := device.NewDevice(dev, conn.NewStdNetBind(), device.NewLogger(device.LogLevelError, "wireguard: "))
	defer wg.Close()
	var uapi strings.Builder
	fmt.Fprintf(&uapi, "private_key=%s\nlisten_port=%d\n", c.PrivateKey, ap.Port())
	for _, p := range c.Peers {
		fmt.Fprintf(&uapi, "public_key=%s\nendpoint=%s\nallowed_ip=%s\n", p.PublicKey, p.Endpoint, p.Subnet)
	}
	if err := wg.IpcSet(uapi.String()); err != nil {
		return fmt.Errorf("configure WireGuard: %w", err)
	}
	if err := wg.Up(); err != nil {
		return fmt.Errorf("WireGuard up: %w", err)
	}
	logf("overlay router (wireguard): %s MTU %d, port %d, %d peers, %s", c.TUN, c.MTU, ap.Port(), len(c.Peers), Cipher)
	select {
	case <-ctx.Done():
	case <-wg.Wait():
	}
	if s, err := wg.IpcGet(); err == nil {
		var rx, tx int64
		for _, line := range strings.Split(s, "\n") {
			var v int64
			if _, err := fmt.Sscanf(line, "rx_bytes=%d", &v); err == nil {
				rx += v
			} else if _, err := fmt.Sscanf(line, "tx_bytes=%d", &v); err == nil {
				tx += v
			}
		}
		logf("overlay router (wireguard): received %d bytes, sent %d bytes from peers", rx, tx)
	}
	return nil
}
