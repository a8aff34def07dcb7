package conditions

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidateLinks(t *testing.T) {
	ms, s := time.Millisecond, time.Second
	flap := func(down time.Duration, at ...time.Duration) *Flap { return &Flap{At: at, Down: down} }
	many := make([]time.Duration, MaxFlaps+1)
	for i := range many {
		many[i] = time.Duration(i) * 100 * ms
	}
	var tooMany []Link
	for i := range MaxLinks + 1 {
		tooMany = append(tooMany, Link{Link: "h" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Delay: ms})
	}
	for _, tc := range []struct {
		name  string
		links []Link
		test  time.Duration
		want  string // "" for valid
	}{
		{"delayed uplink", []Link{{Link: "server", Delay: 5 * ms, Jitter: ms, Loss: 1, Rate: "100mbit"}}, 10 * s, ""},
		{"flap", []Link{{Link: "server", Flap: flap(s, 2*s)}}, 6 * s, ""},
		{"two flaps", []Link{{Link: "server", Flap: flap(s, 1*s, 3*s)}}, 6 * s, ""},
		{"zones flap", []Link{{Link: ZonesLink, Flap: flap(s, 2*s)}}, 6 * s, ""},
		{"no name", []Link{{Delay: ms}}, 6 * s, "links[0].link: name the link"},
		{"long name", []Link{{Link: strings.Repeat("x", 40), Delay: ms}}, 6 * s, "links[0].link \"xxxxxxxx"},
		{"nothing", []Link{{Link: "server"}}, 6 * s, "links[0].link server: impairs nothing"},
		{"twice", []Link{{Link: "server", Delay: ms}, {Link: "server", Loss: 1}}, 6 * s, `links[1].link "server": listed twice`},
		{"negative delay", []Link{{Link: "server", Delay: -ms}}, 6 * s, "links[0].delay -1ms: want 0 to 10s"},
		{"delay above 10s", []Link{{Link: "server", Delay: 11 * s}}, 6 * s, "links[0].delay 11s"},
		{"jitter above delay", []Link{{Link: "server", Delay: ms, Jitter: 2 * ms}}, 6 * s, "links[0].jitter 2ms: want 0 to delay (1ms)"},
		{"loss 100", []Link{{Link: "server", Loss: 100}}, 6 * s, "links[0].loss 100"},
		{"loss NaN", []Link{{Link: "server", Loss: math.NaN()}}, 6 * s, "links[0].loss NaN"},
		{"bad rate", []Link{{Link: "server", Rate: "fast"}}, 6 * s, `links[0].rate "fast"`},
		{"zones delay", []Link{{Link: ZonesLink, Delay: ms}}, 6 * s, "links[0].delay, jitter, loss: the zones' link is delayed by the conditions zone_delay"},
		{"flap without times", []Link{{Link: "server", Flap: flap(s)}}, 6 * s, "links[0].flap.at: give the times"},
		{"flap too short", []Link{{Link: "server", Flap: flap(0, s)}}, 6 * s, "links[0].flap.down 0s: want at least 1ms"},
		{"too many flaps", []Link{{Link: "server", Flap: flap(10*ms, many...)}}, 60 * s, "links[0].flap.at: 17 flaps, more than 16"},
		{"flap past the test", []Link{{Link: "server", Flap: flap(2*s, 5*s)}}, 6 * s, "links[0].flap.at[0] 5s: with down 2s it ends at 7s, not before the shortest test's end (6s)"},
		{"flap at the test's end", []Link{{Link: "server", Flap: flap(s, 5*s)}}, 6 * s, "links[0].flap.at[0] 5s"},
		{"flaps overlapping", []Link{{Link: "server", Flap: flap(2*s, s, 2*s)}}, 6 * s, "links[0].flap.at[1] 2s: before the flap at 1s is up again"},
		{"flap negative", []Link{{Link: "server", Flap: flap(s, -s)}}, 6 * s, "links[0].flap.at[0] -1s"},
		{"flap without a duration", []Link{{Link: "server", Flap: flap(s, s)}}, 0, "links[0].flap: flaps need tests with a duration"},
		// Times whose sum wraps around past 2^63 ns, to a negative time
		// that passed every bound on the sum.
		{"flap down forever", []Link{{Link: "server", Flap: flap(math.MaxInt64, s)}}, 6 * s, "links[0].flap.down 2562047h47m16.854775807s: not shorter than the shortest test (6s)"},
		{"flap at the end of time", []Link{{Link: "server", Flap: flap(s, math.MaxInt64-s/2)}}, 6 * s, "links[0].flap.at[0] 2562047h47m16.354775807s: not before the shortest test's end (6s)"},
		{"second flap at the end of time", []Link{{Link: "server", Flap: flap(s, s, math.MaxInt64-s/2)}}, 6 * s, "links[0].flap.at[1] 2562047h47m16.354775807s: not before"},
		{"flap down as long as the test", []Link{{Link: "server", Flap: flap(6*s, 0)}}, 6 * s, "links[0].flap.down 6s: not shorter than the shortest test (6s)"},
		{"too many links", tooMany, 6 * s, "links: 65 links, more than 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateLinks("links", tc.links, FlapWindow{Test: tc.test})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ValidateLinks: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("ValidateLinks = %v, want it to start %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("ValidateLinks = %q: more than one line", err)
			}
		})
	}
}

func TestCheckLinkNames(t *testing.T) {
	hosts := []string{"client", "server"}
	for _, tc := range []struct {
		name  string
		links []Link
		zoned bool
		want  string
	}{
		{"host", []Link{{Link: "server"}}, false, ""},
		{"zones", []Link{{Link: ZonesLink}}, true, ""},
		{"zones without zones", []Link{{Link: ZonesLink}}, false, "links[0].link zones: the lab has no zones (set zone_hosts or zone_delay)"},
		{"unknown host", []Link{{Link: "client"}, {Link: "pong"}}, false, `links[1].link "pong": the lab has no such link (it has client, server)`},
		{"unknown host, zoned", []Link{{Link: "pong"}}, true, `links[0].link "pong": the lab has no such link (it has client, server, zones)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := hosts
			if tc.zoned {
				names = append(slices.Clone(hosts), ZonesLink)
			}
			err := CheckLinkNames("links", tc.links, names)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckLinkNames: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("CheckLinkNames = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWithDelay(t *testing.T) {
	ms := time.Millisecond
	flap := &Flap{At: []time.Duration{time.Second}, Down: time.Second}
	links := []Link{{Link: "server", Delay: 2 * ms}, {Link: "client", Flap: flap}}
	got := WithDelay(links, []string{"client", "server", "siege"}, 5*ms)
	want := []Link{{Link: "server", Delay: 2 * ms}, {Link: "client", Delay: 5 * ms, Flap: flap}, {Link: "siege", Delay: 5 * ms}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WithDelay = %+v, want %+v", got, want)
	}
	if links[1].Delay != 0 {
		t.Error("WithDelay changed its input")
	}
	if got := WithDelay(links, []string{"x"}, 0); !reflect.DeepEqual(got, links) {
		t.Errorf("WithDelay without a delay = %+v", got)
	}
	if d := (Set{Delay: "5ms"}).LinkDelay(); d != 5*ms {
		t.Errorf("LinkDelay = %s", d)
	}
}

func TestImpairments(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		im   Impairments
		want string
	}{
		{"one", Impairments{"slow": {{Link: "server", Delay: ms}}}, ""},
		{"bad name", Impairments{"Slow": {{Link: "server", Delay: ms}}}, "impairments.Slow: name it with 1-32 of a-z, 0-9 and -"},
		{"empty", Impairments{"slow": nil}, "impairments.slow: lists no link"},
		{"bad link", Impairments{"a": {{Link: "server", Delay: ms}}, "b": {{Link: "server", Loss: 100}}}, "impairments.b[0].loss 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.im.Validate(FlapWindow{Test: 6 * time.Second})
			if (tc.want == "" && err != nil) || (tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want))) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	flap := &Flap{At: []time.Duration{time.Second}, Down: time.Second}
	got := Merge([]Link{{Link: "server", Delay: ms}, {Link: "client", Rate: "1mbit"}}, []Link{{Link: "server", Flap: flap}, {Link: "siege", Loss: 1}})
	want := []Link{{Link: "server", Flap: flap}, {Link: "client", Rate: "1mbit"}, {Link: "siege", Loss: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge = %+v, want %+v", got, want)
	}
}

// TestValidatePingPongFlaps: ping-pong's cells have no time, so its flaps
// end by MaxUntimedFlapEnd and each is shorter than a request's timeout.
func TestValidatePingPongFlaps(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name     string
		at, down time.Duration
		want     string // "" for valid
	}{
		{"one second", s, s, ""},
		{"ends at the bound", MaxUntimedFlapEnd - s, s, ""},
		{"past the bound", MaxUntimedFlapEnd, s, "links[0].flap.at[0] 10m0s: with down 1s it ends at 10m1s, after 10m0s"},
		{"as long as the timeout", s, 60 * s, "links[0].flap.down 1m0s: not shorter than pingpong.timeout (1m0s)"},
		{"at the end of time", math.MaxInt64 - s/2, s, "links[0].flap.at[0] 2562047h47m16.354775807s: after 10m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			links := []Link{{Link: "pong", Flap: &Flap{At: []time.Duration{tc.at}, Down: tc.down}}}
			err := ValidateLinks("links", links, FlapWindow{Request: 60 * s})
			if (tc.want == "" && err != nil) || (tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want))) {
				t.Fatalf("ValidateLinks = %v, want %q", err, tc.want)
			}
		})
	}
}
