package record

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
)

func TestWrap(t *testing.T) {
	c := workload.Case{Test: workload.Test{Workload: "stream"}, Label: "stream", Index: 2}
	rr := workload.Case{Test: workload.Test{Workload: "rr"}}
	tests := []struct {
		c    workload.Case
		line string
		kind string
		err  string
	}{
		{c, `{"workload":"stream","kind":"start","server":"198.18.0.2:5201"}`, "start", ""},
		{c, `{"workload":"stream","kind":"interval","protocol":"tcp","stream":-1,"start":0,"end":1,"bytes":10}`, "interval", ""},
		{c, `{"workload":"stream","kind":"end","protocol":"tcp","duration_s":10,"receiver_bytes":5}`, "total", ""},
		{rr, `{"workload":"rr","kind":"end","type":"result"}`, "total", ""},
		{c, `Connecting to ...`, "", "not a JSON envelope"},
		// A bare record, as clients printed before the envelope: refused,
		// since a new client never prints one.
		{c, `{"workload":"stream","protocol":"tcp","duration_s":10,"receiver_bytes":5}`, "", `kind ""`},
		{c, `{"workload":"stream","kind":"result"}`, "", `kind "result"`},
		{c, `{"kind":"end"}`, "", "no workload"},
		{c, `{"workload":"rr","kind":"end","type":"result"}`, "", `"rr" record in a stream test`},
	}
	for _, tc := range tests {
		r, err := Wrap(tc.c, []byte(tc.line))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || r.Kind != tc.kind || string(r.Data) != tc.line {
			t.Errorf("%s: %+v, %v; want kind %s", tc.line, r, err, tc.kind)
		}
	}
	r, _ := Wrap(c, []byte(`{"workload":"stream","kind":"end","duration_s":1}`))
	if r.Test != 2 || r.Case != "stream" {
		t.Errorf("record does not carry its case: %+v", r)
	}
}
