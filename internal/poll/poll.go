// Package poll waits for a condition that nothing announces (a device
// appearing, a port bound, a daemon answering, processes gone) by asking
// again at an interval until a deadline: one loop instead of one per caller.
package poll

import (
	"context"
	"errors"
	"time"
)

// ErrTimeout is what Until returns when the time is up.
var ErrTimeout = errors.New("timed out")

// Until calls done at once and then every `every` until it reports true,
// returns an error (returned as it is), ctx ends (ctx's error) or within
// has passed (ErrTimeout). done is always called at least once.
func Until(ctx context.Context, within, every time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(within)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if !time.Now().Before(deadline) {
			return ErrTimeout
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
