package serverkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// ControlTimeout bounds one exchange on a control connection (a request,
// an answer, a hello), on both sides.
const ControlTimeout = 10 * time.Second

// pairTries bounds the free ports ListenPair tries when the UDP port of the
// TCP listener's number is taken.
const pairTries = 20

// ListenPair opens a TCP listener on addr and a UDP socket on the same
// port number, so that one published port reaches a server's control and
// data. With port 0 (or none), both get the same free port.
func ListenPair(addr string) (net.Listener, *net.UDPConn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %q: %w", addr, err)
	}
	for try := 0; ; try++ {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			return ln, pc.(*net.UDPConn), nil
		}
		ln.Close()
		if (port != "0" && port != "") || try == pairTries {
			return nil, nil, fmt.Errorf("listen on %s/udp: %w", addr, err)
		}
		// That port is taken over UDP: pick another.
	}
}

// WithPort adds port to an address without one (a bare IPv6 address may
// have brackets); an empty address stays empty.
func WithPort(addr string, port int) string {
	if _, _, err := net.SplitHostPort(addr); err == nil || addr == "" {
		return addr
	}
	if len(addr) > 1 && addr[0] == '[' && addr[len(addr)-1] == ']' {
		addr = addr[1 : len(addr)-1]
	}
	return net.JoinHostPort(addr, strconv.Itoa(port))
}

// OrDefault is a server's setting v, or dflt when v is not set (not
// positive): its zero value takes the default.
func OrDefault[T int | time.Duration](v, dflt T) T {
	if v > 0 {
		return v
	}
	return dflt
}

// Replier writes a server's answers on control connection c: JSON, one
// object a line, each within ControlTimeout; false: c failed.
func Replier[T any](c net.Conn) func(T) bool {
	enc := json.NewEncoder(c)
	return func(v T) bool {
		_ = c.SetWriteDeadline(time.Now().Add(ControlTimeout))
		return enc.Encode(v) == nil
	}
}

// Logger writes a server's log lines to w (nil: nowhere), each whole and
// prefixed, from any goroutine.
func Logger(w io.Writer, prefix string) func(format string, a ...any) {
	if w == nil {
		w = io.Discard
	}
	var mu sync.Mutex
	return func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, prefix+format+"\n", a...)
	}
}

// Replay is a connection whose first bytes were read already, to tell
// what it is: Read gives them again first.
type Replay struct {
	net.Conn
	Head []byte
}

func (c *Replay) Read(p []byte) (int, error) {
	if len(c.Head) > 0 {
		n := copy(p, c.Head)
		c.Head = c.Head[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// maxClip is how much of a client's string an error or a log line quotes.
const maxClip = 64

// Clip shortens a client's string for an error or a log line (which quote
// it with %q, so it cannot forge a line).
func Clip(s string) string {
	if len(s) > maxClip {
		return s[:maxClip] + "..."
	}
	return s
}
