package pingpong

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// ShutdownGrace bounds how long Serve waits for in-flight requests after ctx
// is cancelled; an /mping towards a dead pong may otherwise hold it for
// Retries × Timeout.
const ShutdownGrace = 5 * time.Second

// Serve runs h on ln until ctx is cancelled, then shuts down gracefully and
// returns nil. Any other end of serving is returned as an error.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second, // no slowloris on a benchmark port
		IdleTimeout:       2 * time.Minute,  // keep-alive across siege pauses
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err // Serve never returns nil
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close() // grace expired: drop the stragglers
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
