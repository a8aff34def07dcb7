package grid

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// The gossip port's bounds. Every stream must be encrypted with the
// member's key (memberlist checks the AES-GCM tag before it decodes
// anything), and before memberlist reads a stream at all the guard below
// checks its first five bytes: the encrypted-message type and a length of
// at most maxGossipStream. Memberlist alone would buffer up to 20 MB for
// every connection that claims it, however many there are.
const (
	// maxGossipStream bounds one encrypted stream message: a push/pull of
	// a grid's state takes hundreds of bytes per member.
	maxGossipStream = 1 << 20
	// maxGossipStreams is how many stream connections memberlist may hold
	// at once; more are closed on arrival.
	maxGossipStreams = 16
	// gossipHeaderTimeout bounds the wait for a stream's first bytes.
	gossipHeaderTimeout = 5 * time.Second
	// gossipKeySize selects AES-256.
	gossipKeySize = 32
	// encryptMsg is memberlist's message type of an encrypted stream
	// (its unexported messageType, stable since protocol version 1).
	encryptMsg = 10
	// gossipStreamHeader is the type byte and the big-endian length.
	gossipStreamHeader = 5
)

// newGossipKey is a grid's own gossip key: each member draws one at start
// and keeps it in memory only, so no process outside its grid can join
// it or send it state it will decode.
func newGossipKey() ([]byte, error) {
	k := make([]byte, gossipKeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("gossip key: %w", err)
	}
	return k, nil
}

// checkGossipHeader says whether a stream's first bytes may reach
// memberlist: an encrypted message of a bounded length. A plain message
// (a push/pull header claiming -1 or 2^31 nodes, say) never does, and
// neither does a label header: members carry no label.
func checkGossipHeader(h []byte) error {
	if len(h) < gossipStreamHeader {
		return errors.New("short header")
	}
	if h[0] != encryptMsg {
		return fmt.Errorf("message type %d: want an encrypted message (%d)", h[0], encryptMsg)
	}
	if n := binary.BigEndian.Uint32(h[1:5]); n == 0 || n > maxGossipStream {
		return fmt.Errorf("encrypted message of %d bytes: want 1..%d", n, maxGossipStream)
	}
	return nil
}

// gossipTransport is memberlist's own TCP and UDP transport with a guard
// on its streams: memberlist reads only the connections whose header
// passes checkGossipHeader, at most maxGossipStreams at once. Packets
// are bounded already (one read of at most 64 KiB each, decrypted before
// they are decoded).
type gossipTransport struct {
	*memberlist.NetTransport
	streams  chan net.Conn
	slots    *serverkit.Gate
	done     chan struct{}
	stopOnce sync.Once
	logger   *log.Logger
}

// newGossipTransport binds ip:port (TCP and UDP) and starts the guard.
func newGossipTransport(ip string, port int, logger *log.Logger) (*gossipTransport, error) {
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{ip}, BindPort: port, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("gossip on %s: %w", net.JoinHostPort(ip, fmt.Sprint(port)), err)
	}
	t := &gossipTransport{NetTransport: nt, streams: make(chan net.Conn), slots: serverkit.NewGate(maxGossipStreams),
		done: make(chan struct{}), logger: logger}
	go t.guard()
	return t, nil
}

// StreamCh is where memberlist takes the streams that passed the guard.
func (t *gossipTransport) StreamCh() <-chan net.Conn { return t.streams }

// Shutdown closes the listeners, then stops the guard: until the
// listeners' goroutines have ended, one may still be handing the guard a
// connection. It may be called twice (by memberlist, and by Serve when
// Olric failed before it).
func (t *gossipTransport) Shutdown() error {
	err := t.NetTransport.Shutdown()
	t.stopOnce.Do(func() { close(t.done) })
	return err
}

func (t *gossipTransport) guard() {
	in := t.NetTransport.StreamCh()
	for {
		select {
		case <-t.done:
			return
		case c := <-in:
			if t.slots.Enter() {
				go t.check(c)
				continue
			}
			t.logger.Printf("[WARN] cnperf: gossip stream from %s closed: %d streams open already", c.RemoteAddr(), maxGossipStreams)
			c.Close()
		}
	}
}

// check reads a stream's header and hands the stream, header included,
// to memberlist if it passes.
func (t *gossipTransport) check(c net.Conn) {
	var once sync.Once
	release := func() { once.Do(t.slots.Leave) }
	h := make([]byte, gossipStreamHeader)
	_ = c.SetReadDeadline(time.Now().Add(gossipHeaderTimeout))
	_, err := io.ReadFull(c, h)
	if err == nil {
		err = checkGossipHeader(h)
	}
	if err != nil {
		t.logger.Printf("[WARN] cnperf: gossip stream from %s refused: %v", c.RemoteAddr(), err)
		c.Close()
		release()
		return
	}
	_ = c.SetReadDeadline(time.Time{}) // memberlist sets its own
	gc := &guardedConn{Replay: serverkit.Replay{Conn: c, Head: h}, release: release}
	select {
	case t.streams <- gc:
	case <-t.done:
		gc.Close()
	}
}

// guardedConn replays the header the guard read, and frees its slot when
// memberlist closes it.
type guardedConn struct {
	serverkit.Replay
	release func()
}

func (c *guardedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
