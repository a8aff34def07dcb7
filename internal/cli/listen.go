package cli

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Servers have no authentication: outside a lab they listen on loopback
// unless told otherwise. The runner passes every server an explicit
// --listen (see docs/workloads.md, "Server safety").
const defaultListenHost = "127.0.0.1"

// listenHelp is the --listen flag's help of every server.
const listenHelp = "address to listen on: HOST:PORT, :PORT (every interface) or HOST; " +
	"loopback by default, as the server has no authentication: open it only on a network you trust"

// defaultListen is a server's default --listen: loopback and its port.
func defaultListen(port int) string {
	return net.JoinHostPort(defaultListenHost, strconv.Itoa(port))
}

// listenAddr checks a server's --listen value s and returns it as
// HOST:PORT (defaultPort when s has none). HOST is empty (every
// interface), an IP address or localhost: a server listens on addresses,
// and checking needs no name lookup. A bad value is bad input: a one-line
// error naming what the user wrote (exit 2).
func listenAddr(s string, defaultPort int) (string, error) {
	bad := func(why string) (string, error) { return "", usagef("--listen %q: %s", s, why) }
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		// A bare host (or IPv6 address) takes the default port.
		host, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), strconv.Itoa(defaultPort)
		if host == "" || strings.Contains(host, ":") && !isIP(host) {
			return bad("want HOST:PORT, :PORT or HOST")
		}
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 || port != strconv.Itoa(p) {
		return bad(fmt.Sprintf("port %q: want a number in 0..65535", port))
	}
	if host != "" && host != "localhost" && !isIP(host) {
		return bad(fmt.Sprintf("host %q: want an IP address (or localhost), or none for every interface", host))
	}
	return net.JoinHostPort(host, port), nil
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
