package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/namespace"
)

// TestLabEngineNotDialledFromTheMachine: an engine URL at a lab address
// (as a lab whose emulated machines are gone leaves in its run dir) is not
// dialled from outside a lab, where the connection would leave the
// machine: the client refuses it before any packet is sent.
func TestLabEngineNotDialledFromTheMachine(t *testing.T) {
	if namespace.InLab() {
		t.Skip("runs inside a lab's namespace")
	}
	for _, url := range []string{"tcp://198.18.0.2:2375", "tcp://[2001:2::2]:2375"} {
		cli, _, err := Dial(url, nil)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = cli.Ping(ctx)
		cancel()
		cli.Close()
		if err == nil || !strings.Contains(err.Error(), "lab address") {
			t.Errorf("%s: ping = %v, want the lab address refused", url, err)
		}
	}
}
