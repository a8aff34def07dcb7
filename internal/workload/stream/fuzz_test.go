package stream

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// FuzzControl feeds a control connection's bytes to the server's parsing:
// the test request, then a done message, and the results built from them.
// Nothing panics, and an accepted test's records and answer stay bounded.
func FuzzControl(f *testing.F) {
	var cookie [cookieLen]byte
	add := func(msgs ...message) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for _, m := range msgs {
			_ = enc.Encode(m)
		}
		f.Add(b.Bytes())
	}
	add(testMessage(Config{Protocol: "tcp", Duration: time.Second}, cookie), message{Type: "done", ElapsedNS: int64(time.Second)})
	add(testMessage(Config{Protocol: "udp", Duration: 999 * time.Second, Interval: workload.MinInterval, Parallel: 16}, cookie), message{Type: "done"})
	add(testMessage(Config{Protocol: "udp", Omit: time.Second, Duration: 3 * time.Second, Parallel: 2}, cookie),
		message{Type: "done", ElapsedNS: -5, Sent: []uint64{1 << 63, 0, 7}})
	f.Add([]byte(`{"type":"test","protocol":"udp","duration_ns":1e12,"interval_ns":1e7,"parallel":128,"cookie":"00000000000000000000000000000000"}{"type":"done","elapsed_ns":9223372036854775807}`))
	f.Add([]byte(`{"type":"test","parallel":-1}`))
	// Found by fuzzing: an interval near 2^63 overflowed the sum in boundaries,
	// which then looped and grew without end.
	f.Add([]byte(`{"type":"test","omit_ns":1,"duration_ns":1,"interval_ns":9223372036854775807,"cookie":"00000000000000000000000000000000"}`))
	f.Add([]byte("{\"type\":\"te\nst\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		cfg, ck, err := decodeTest(dec)
		if err != nil {
			if bytes.ContainsAny([]byte(err.Error()), "\n\r") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted an invalid test: %v", err)
		}
		tt := newTest(cfg, ck, maxBinCells)
		cells := 0
		for _, r := range tt.recv {
			cells += len(r.bytes)
		}
		if cells > maxBinCells || len(tt.recv) != cfg.Parallel {
			t.Fatalf("%+v: %d records for %d streams", cfg, cells, len(tt.recv))
		}
		var done message
		if dec.Decode(&done) != nil {
			return
		}
		m := tt.results(time.Duration(done.ElapsedNS), done.Sent)
		nb := len(m.Edges) - 1
		if nb < 1 || nb*cfg.Parallel > maxBinCells || len(m.Streams) != cfg.Parallel {
			t.Fatalf("%+v: results with %d bins, %d streams", cfg, nb, len(m.Streams))
		}
		for _, st := range m.Streams {
			if len(st.Bytes) != nb {
				t.Fatalf("stream with %d bins of %d", len(st.Bytes), nb)
			}
		}
		// The client reads any answer without failing.
		r := &runner{cfg: cfg, emit: func(Interval) {}}
		var res Result
		if err := r.receiverSide(m, &res); err != nil {
			t.Fatalf("client refuses the server's results: %v", err)
		}
	})
}

// FuzzResults feeds the client a server's answer: it never panics.
func FuzzResults(f *testing.F) {
	f.Add([]byte(`{"type":"results","edges":[0,1,2],"streams":[{"bytes":[1,2],"packets":[1,1],"lost":[0,0],"out_of_order":[0,0]}]}`), true, 1)
	f.Add([]byte(`{"type":"results","edges":[0],"streams":[]}`), false, 2)
	f.Fuzz(func(t *testing.T, data []byte, udp bool, parallel int) {
		if parallel < 1 || parallel > descriptors.StreamMaxParallel {
			return
		}
		cfg := Config{Protocol: "tcp", Duration: time.Second, Parallel: parallel}
		if udp {
			cfg.Protocol = "udp"
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			return
		}
		r := &runner{cfg: cfg.withDefaults(), emit: func(Interval) {}}
		var res Result
		_ = r.receiverSide(m, &res)
	})
}
