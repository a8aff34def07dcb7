package spec

import "testing"

// TestSeed004Concurrency: Kratzke's (2015) presets keep 50 requests in flight,
// as the paper's apachebench runs did (ab -c 50).
func TestSeed004Concurrency(t *testing.T) {
	for _, name := range []string{"seed004", "seed004-zones"} {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.PingPong.Concurrency != 50 {
			t.Errorf("%s: concurrency %d, want the paper's 50", name, s.PingPong.Concurrency)
		}
	}
}
