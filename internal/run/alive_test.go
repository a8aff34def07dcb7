package run

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
)

// deadAfter is a runtime whose daemon is found dead from a moment on.
type deadAfter struct {
	lab.BaseRuntime
	lab.Launcher // starts nothing
	at           time.Time
}

func (d deadAfter) Sight() lab.Sight { return lab.Sight{Local: true, Own: true} }

func (d deadAfter) Alive() error {
	if time.Now().After(d.at) {
		return errors.New("dockerd on pong exited (signal: killed)")
	}
	return nil
}

// exitedProc is a server that has ended with err.
type exitedProc struct {
	err   error
	calls atomic.Int32
}

func (p *exitedProc) PID() int { return 0 }
func (p *exitedProc) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
func (p *exitedProc) Exited() (bool, error)     { p.calls.Add(1); return true, p.err }
func (p *exitedProc) Stop(time.Duration) error  { return nil }
func (p *exitedProc) Usage() (lab.Usage, error) { return lab.Usage{}, nil }

// TestAliveNamesTheDeadDaemon: a server whose engine died sees its
// connection break before the daemon's reaper has run; alive reports the
// daemon, not the server, once the runtime finds it dead within the grace.
func TestAliveNamesTheDeadDaemon(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rt      lab.Runtime
		want    string
		maxTime time.Duration
	}{
		{"daemon found dead a moment later", deadAfter{at: time.Now().Add(100 * time.Millisecond)}, "dockerd on pong exited", runtimeGrace},
		{"daemon alive: the server's own exit", deadAfter{at: time.Now().Add(time.Hour)}, "pong server exited (lost the engine", 2 * runtimeGrace},
		{"no runtime: at once", nil, "pong server exited (lost the engine", 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{lab: &lab.Lab{Runtime: tc.rt}, procs: map[string]proc{
				"pong": &exitedProc{err: errors.New("lost the engine: unexpected EOF")},
			}}
			start := time.Now()
			err := e.alive()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("alive() = %v, want an error with %q", err, tc.want)
			}
			if d := time.Since(start); d > tc.maxTime {
				t.Errorf("alive took %v, want at most %v", d, tc.maxTime)
			}
		})
	}
}
