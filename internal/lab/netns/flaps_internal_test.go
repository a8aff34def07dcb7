package netns

import (
	"reflect"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// TestRunFlapsNotDone: flaps due after the cell's clients ended are
// recorded as not done, without touching the link (no device is named).
func TestRunFlapsNotDone(t *testing.T) {
	done := make(chan struct{})
	close(done)
	p := flapPlan{link: "pong", ns: "cnperf-none", dev: "none", at: []time.Duration{time.Hour, 2 * time.Hour}, downTime: time.Second}
	got := runFlaps(p, time.Now(), done)
	want := []record.Flap{{Link: "pong", At: 3600, NotDone: true}, {Link: "pong", At: 7200, NotDone: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("runFlaps = %+v, want %+v", got, want)
	}
}
