package pingpong

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CheckTarget reports a ping URL siege cannot use: it must be
// http(s)://host[:port][/prefix], without user info, query or fragment.
func CheckTarget(raw string) error {
	_, err := BaseURL(raw)
	return err
}

// Bounds of a plausible /mping answer; an int field above maxWhole cannot be
// told apart from its neighbours once JSON made it a float.
const (
	maxWhole   = 1 << 53
	maxHTTPish = 999
)

// ParseMPing reads ping's /mping answer: a JSON object with the original's
// four keys, length, code and retries whole numbers (4 and 4.0 alike),
// duration a number; code in 100..999, the others not negative. Other keys
// are ignored.
func ParseMPing(body []byte) (MPing, error) {
	var raw struct {
		Duration, Length, Code, Retries *json.Number
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return MPing{}, fmt.Errorf("not JSON: %v", OneLine(err.Error()))
	}
	var m MPing
	whole := func(name string, n *json.Number, lo int, dst *int) error {
		if n == nil {
			return fmt.Errorf("no %q", name)
		}
		f, err := strconv.ParseFloat(string(*n), 64)
		if err != nil || f != math.Trunc(f) || f < float64(lo) || f > maxWhole {
			return fmt.Errorf("%q is %.30s, want a whole number >= %d", name, *n, lo)
		}
		*dst = int(f)
		return nil
	}
	if err := whole("length", raw.Length, 0, &m.Length); err != nil {
		return MPing{}, err
	}
	if err := whole("code", raw.Code, 100, &m.Code); err != nil {
		return MPing{}, err
	}
	if m.Code > maxHTTPish {
		return MPing{}, fmt.Errorf(`"code" is %d, want an HTTP status`, m.Code)
	}
	if err := whole("retries", raw.Retries, 0, &m.Retries); err != nil {
		return MPing{}, err
	}
	if raw.Duration == nil {
		return MPing{}, errors.New(`no "duration"`)
	}
	d, err := strconv.ParseFloat(string(*raw.Duration), 64)
	if err != nil || d < 0 || math.IsInf(d, 0) {
		return MPing{}, fmt.Errorf(`"duration" is %.30s, want a number of ms >= 0`, *raw.Duration)
	}
	m.Duration = d
	return m, nil
}

// OneLine keeps error strings to one line so they fit CSV cells and logs.
func OneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
