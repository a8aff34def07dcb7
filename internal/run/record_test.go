package run

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
)

func TestWrapLine(t *testing.T) {
	c := workload.Case{Test: workload.Test{Workload: "stream"}, Label: "stream", Index: 2}
	tests := []struct {
		c    workload.Case
		line string
		kind string
		err  string
	}{
		{c, `{"workload":"stream","protocol":"tcp","stream":-1,"start":0,"end":1,"bytes":10}`, "interval", ""},
		{c, `{"workload":"stream","protocol":"tcp","duration_s":10,"receiver_bytes":5}`, "total", ""},
		{workload.Case{Test: workload.Test{Workload: "rr"}}, `{"workload":"rr","type":"interval"}`, "interval", ""},
		{workload.Case{Test: workload.Test{Workload: "rr"}}, `{"workload":"rr","type":"result"}`, "total", ""},
		{workload.Case{Test: workload.Test{Workload: "jitter"}}, `{"workload":"jitter","total":true}`, "total", ""},
		{workload.Case{Test: workload.Test{Workload: "datagram"}}, `{"workload":"datagram","total":false}`, "interval", ""},
		{c, `Connecting to ...`, "", "not JSON"},
		{c, `{"workload":"rr","type":"result"}`, "", `"rr" record in a stream test`},
	}
	for _, tc := range tests {
		r, err := wrapLine(tc.c, []byte(tc.line))
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
	r, _ := wrapLine(c, []byte(`{"workload":"stream","duration_s":1}`))
	if r.Test != 2 || r.Case != "stream" {
		t.Errorf("record does not carry its case: %+v", r)
	}
}
