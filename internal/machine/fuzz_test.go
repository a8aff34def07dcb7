package machine

import (
	"bytes"
	"math"
	"testing"
)

// FuzzRead: whatever a file holds, Read returns a profile whose features
// compare with themselves as exactly 1, or an error; it never panics.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"kind":"cnperf-machine-profile","format":1,"repeat":3,"features":{"threads":2,"processing_s":0.9,"memory_bytes":8e9,"memory_bandwidth":1e10,"disk_read":1e9,"disk_write":5e8,"network":3e10},"runs":{"network":[3e10,2.9e10,3.1e10]},"skipped":{},"notes":["disk: direct I/O"]}`))
	f.Add([]byte(`{"kind":"cnperf-machine-profile","format":1,"features":{"threads":1},"skipped":{"network":"not root"}}`))
	f.Add([]byte(`{"kind":"cnperf-machine-profile","format":2}`))
	f.Add([]byte(`{"kind":"cnperf-machine-profile","format":1,"features":{"threads":1e400}}`))
	f.Add([]byte(`{"kind":"cnperf-machine-profile","format":1,"features":{"threads":"NaN"}}`))
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Read(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		if s, m := Similarity(p, p); s != 1 || m != len(p.Features) {
			t.Fatalf("accepted profile %v: self-similarity %v over %d features", p.Features, s, m)
		}
		for k, v := range p.Features {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("accepted %s = %v", k, v)
			}
		}
	})
}
