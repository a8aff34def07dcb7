package conditions

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestFieldsDeclareEverySetField: the docs' table of conditions
// (rendered from Fields) lists every field a spec's conditions take, once,
// in Set's order, and no other.
func TestFieldsDeclareEverySetField(t *testing.T) {
	var want []string
	typ := reflect.TypeOf(Set{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		if name != "name" {
			want = append(want, name)
		}
	}
	var got []string
	for _, f := range Fields {
		got = append(got, f.Name)
		if f.Values == "" || f.Meaning == "" {
			t.Errorf("%s: values %q, meaning %q: say both", f.Name, f.Values, f.Meaning)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Fields name %q,\nSet has %q", got, want)
	}
}

func TestShortDuration(t *testing.T) {
	for in, want := range map[string]string{"24h0m0s": "24h", "10s": "10s", "1h0m0s": "1h", "1m0s": "1m", "1h30m0s": "1h30m"} {
		d, err := time.ParseDuration(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %s, want %s", in, got, want)
		}
	}
}
