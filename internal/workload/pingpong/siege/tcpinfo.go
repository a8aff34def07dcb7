package siege

import (
	"context"
	"net"
	"sync"

	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// tcpConns sums TCP_INFO of siege's connections to ping, each read as it
// closes: when the transport drops it, or at the end, when the idle ones
// are closed. Retransmits are siege's own (its requests); ping's answers
// lost on the way are ping's to retransmit.
type tcpConns struct {
	mu  sync.Mutex
	acc tcpinfo.Acc
}

// dial wraps the transport's dial so that every connection reads its
// TCP_INFO into t before it closes.
func (t *tcpConns) dial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &infoConn{Conn: c, t: t}, nil
	}
}

func (t *tcpConns) stats() *tcpinfo.Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.acc.Stats()
}

// infoConn reads its TCP_INFO once, on its first Close.
type infoConn struct {
	net.Conn
	t    *tcpConns
	once sync.Once
}

func (c *infoConn) Close() error {
	c.once.Do(func() {
		c.t.mu.Lock()
		c.t.acc.ReadConn(c.Conn)
		c.t.mu.Unlock()
	})
	return c.Conn.Close()
}
