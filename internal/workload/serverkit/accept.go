package serverkit

import (
	"context"
	"errors"
	"net"
	"time"
)

// Accept waits for a server's next connection until ctx ends (nil, nil)
// or the listener is closed (its error). Other errors (out of descriptors,
// say) are logged and retried after a pause that doubles up to a second,
// so that the server outlives them.
func Accept(ctx context.Context, accept func() (net.Conn, error), logf func(format string, a ...any)) (net.Conn, error) {
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		c, err := accept()
		switch {
		case err == nil:
			return c, nil
		case ctx.Err() != nil:
			return nil, nil
		case errors.Is(err, net.ErrClosed):
			return nil, err
		}
		logf("accept: %v", err)
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(delay):
		}
	}
}
