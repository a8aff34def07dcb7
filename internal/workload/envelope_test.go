package workload

import (
	"bytes"
	"strings"
	"testing"
)

// TestPrinter: an envelope line is workload and kind, then the payload's
// fields in their order; it decodes back, and a payload that would make it
// ambiguous is refused.
func TestPrinter(t *testing.T) {
	var buf bytes.Buffer
	p := NewPrinter(&buf, "rr")
	payload := struct {
		Workload string  `json:"workload"`
		Type     string  `json:"type"`
		Rate     float64 `json:"trans_per_s"`
	}{"rr", "result", 12.5}
	if err := p.Print(KindEnd, payload); err != nil {
		t.Fatal(err)
	}
	want := `{"workload":"rr","kind":"end","type":"result","trans_per_s":12.5}` + "\n"
	if buf.String() != want {
		t.Fatalf("printed %q, want %q", buf.String(), want)
	}
	env, err := Decode(bytes.TrimSpace(buf.Bytes()))
	if err != nil || env.Workload != "rr" || env.Kind != KindEnd {
		t.Errorf("Decode: %+v, %v", env, err)
	}
	for _, tc := range []struct {
		v    any
		want string
	}{
		{[]int{1}, "not a JSON object"},
		{map[string]string{"kind": "x"}, "kind of its own"},
		{map[string]string{"workload": "stream"}, `says workload "stream"`},
		{map[string]any{"f": func() {}}, "unsupported type"},
	} {
		if err := p.Print(KindInterval, tc.v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Print(%T): %v, want %q", tc.v, err, tc.want)
		}
	}
	for _, line := range []string{`{"workload":"rr"}`, `{"workload":"rr","kind":"total"}`, `{"kind":"end"}`, `[]`} {
		if _, err := Decode([]byte(line)); err == nil {
			t.Errorf("Decode(%s) accepted a line that is no envelope", line)
		}
	}
}
