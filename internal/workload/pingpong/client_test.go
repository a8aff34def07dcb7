package pingpong

import (
	"strings"
	"testing"
)

func TestParseMPing(t *testing.T) {
	tests := []struct {
		body string
		want MPing
		err  string
	}{
		{`{"length": 4, "code": 200, "retries": 0, "duration": 1.1897550000000001}`, MPing{1.1897550000000001, 4, 200, 0}, ""},
		{`{"length": 0, "code": 503, "retries": 100, "duration": 110.917285}`, MPing{110.917285, 0, 503, 100}, ""},
		{`{"duration":2,"length":5,"code":200,"retries":1,"extra":[1]}`, MPing{2, 5, 200, 1}, ""},
		{`{"length": 4.0, "code": 2e2, "retries": 0, "duration": 1e-05}`, MPing{1e-05, 4, 200, 0}, ""},
		{`{"length": 4, "code": 200, "retries": 0}`, MPing{}, `no "duration"`},
		{`{"length": 4, "retries": 0, "duration": 1}`, MPing{}, `no "code"`},
		{`{"code": 200, "retries": 0, "duration": 1}`, MPing{}, `no "length"`},
		{`{"length": 4, "code": 200, "duration": 1}`, MPing{}, `no "retries"`},
		{`{"length": -1, "code": 200, "retries": 0, "duration": 1}`, MPing{}, `"length" is -1`},
		{`{"length": 4.5, "code": 200, "retries": 0, "duration": 1}`, MPing{}, `"length" is 4.5`},
		{`{"length": 1e300, "code": 200, "retries": 0, "duration": 1}`, MPing{}, `"length" is 1e300`},
		{`{"length": 4, "code": 0, "retries": 0, "duration": 1}`, MPing{}, `"code" is 0`},
		{`{"length": 4, "code": 1000, "retries": 0, "duration": 1}`, MPing{}, `"code" is 1000`},
		{`{"length": 4, "code": 200, "retries": -2, "duration": 1}`, MPing{}, `"retries" is -2`},
		{`{"length": 4, "code": 200, "retries": 0, "duration": -1}`, MPing{}, `"duration" is -1`},
		{`{"length": 4, "code": 200, "retries": 0, "duration": 1e999}`, MPing{}, `"duration" is 1e999`},
		{`{"length": 4, "code": 200, "retries": 0, "duration": "x"}`, MPing{}, `not JSON`},
		{`[]`, MPing{}, `not JSON`},
		{`null`, MPing{}, `no "length"`},
		{`404 page not found`, MPing{}, `not JSON`},
		{``, MPing{}, `not JSON`},
	}
	for _, tt := range tests {
		got, err := ParseMPing([]byte(tt.body))
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseMPing(%s) = %+v, %v; want %+v", tt.body, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseMPing(%s) = %+v, %v; want a one-line error with %q", tt.body, got, err, tt.err)
		}
	}
}
