package spec_test

import (
	"strings"
	"testing"
)

const claimsSpec = `name: c
modes: [bare, bridge, overlay]
variants: [{name: one}, {name: two, zone_delay: 1ms}]
claims:
  - id: bridge-small
    says: "the bridge keeps 80-90 % of the transfer rate"
    source: "Sec. 4.1, Fig. 5"
    metric: transfer
    series: bridge/one
    sizes: [10, 10000]
    ratio: [0.80, 0.90]
    explain: {because: "a faster network", variant: two}
  - id: zones
    says: "no loss across zones"
    source: "Sec. 4.5"
    metric: transfer
    series: bare/two
    against: bare/one
    ratio: [0.95, null]
`

func TestClaimsDecode(t *testing.T) {
	s, err := parse(claimsSpec)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Claims) != 2 {
		t.Fatalf("claims: %+v", s.Claims)
	}
	c := s.Claims[0]
	if lo, hi := c.Bounds(); lo != 0.8 || hi != 0.9 || c.Sizes[1] != 10000 || c.Explain.Variant != "two" {
		t.Errorf("first claim: %+v, bounds %v %v", c, lo, hi)
	}
	if got := s.AgainstKey(c); got != "bare/one" {
		t.Errorf("against of %s: %s, want the reference under its variant, bare/one", c.Series, got)
	}
	if lo, hi := s.Claims[1].Bounds(); lo != 0.95 || hi < 1e300 {
		t.Errorf("open bound: %v %v", lo, hi)
	}
}

// A bad claim is one line naming its field.
func TestClaimsRefused(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"id: bridge-small", "id: Bridge_Small", "claims[0].id"},
		{"id: zones", "id: bridge-small", "claims[1].id \"bridge-small\": there twice"},
		{`says: "no loss across zones"`, `says: ""`, "claims[1].says"},
		{`source: "Sec. 4.5"`, `source: " "`, "claims[1].source"},
		{"series: bridge/one", "series: bridge", "claims[0].series \"bridge\": not a series"},
		{"against: bare/one", "against: bare/three", "claims[1].against"},
		{"against: bare/one", "against: bare/two", "claims[1].series \"bare/two\": compared with itself"},
		{"sizes: [10, 10000]", "sizes: [10000, 10]", "claims[0].sizes"},
		{"sizes: [10, 10000]", "sizes: [10]", "claims[0].sizes"},
		{"ratio: [0.80, 0.90]", "ratio: [0.90, 0.80]", "claims[0].ratio"},
		{"ratio: [0.80, 0.90]", "ratio: [null, null]", "claims[0].ratio"},
		{"ratio: [0.80, 0.90]", "ratio: [.nan, 1]", "claims[0].ratio"},
		{"ratio: [0.95, null]", "ratio: [0.95]", "claims[1].ratio"},
		{"variant: two}", "variant: three}", "claims[0].explain.variant \"three\""},
		{"variant: two}", "variant: two, untestable: no}", "claims[0].explain: give one of"},
		{`because: "a faster network",`, `because: "",`, "claims[0].explain.because"},
		{"metric: transfer\n    series: bridge/one", "metric: transfer\n    test: stream\n    series: bridge/one", "claims[0].test"},
		{"metric: transfer\n    series: bridge/one", "metric: transfer\n    colour: red\n    series: bridge/one", `unknown field "claims[].colour"`},
	} {
		doc := strings.Replace(claimsSpec, tc.from, tc.to, 1)
		if doc == claimsSpec {
			t.Fatalf("%q is not in the spec", tc.from)
		}
		_, err := parse(doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s -> %s: %v, want one line with %q", tc.from, tc.to, err, tc.want)
		}
	}
}

// A run that narrows the modes keeps the claims on the series left.
func TestCoveredClaims(t *testing.T) {
	s, err := parse(claimsSpec)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.CoveredClaims()); got != 2 {
		t.Errorf("all modes: %d claims", got)
	}
	s.Modes = []string{"bare", "overlay"}
	if got := s.CoveredClaims(); len(got) != 1 || got[0].ID != "zones" {
		t.Errorf("without bridge: %+v", got)
	}
}
