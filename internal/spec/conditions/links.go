package conditions

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Link is one impaired link of a lab's topology, named in the topology's
// words: a host's uplink by the host's name (its NIC to the switch,
// "server", "pong", "h2"), or "zones", the link between a zoned lab's
// switches. It is delayed, spread, lossy and rate-limited both ways, and
// may be taken down at given times of each cell (containerlab's link
// impairments and flaps).
type Link struct {
	Link   string        `yaml:"link" json:"link"`
	Delay  time.Duration `yaml:"delay,omitempty" json:"delay,omitempty"`   // one way, each way
	Jitter time.Duration `yaml:"jitter,omitempty" json:"jitter,omitempty"` // uniform in ±jitter, at most delay
	Loss   float64       `yaml:"loss,omitempty" json:"loss,omitempty"`     // percent of frames each way, [0, 100)
	Rate   string        `yaml:"rate,omitempty" json:"rate,omitempty"`     // as bandwidth: TBF each way
	Flap   *Flap         `yaml:"flap,omitempty" json:"flap,omitempty"`
}

// Flap takes a link down for Down at each of At, offsets from each
// cell's start (its clients' start), so that every repetition sees the
// same flap at the same point of its test.
type Flap struct {
	At   []time.Duration `yaml:"at" json:"at"`
	Down time.Duration   `yaml:"down" json:"down"`
}

// Bounds of links.
const (
	MaxLinks      = 64               // links
	MaxFlaps      = 16               // links[].flap.at
	MaxLinkDelay  = 10 * time.Second // links[].delay
	ZonesLink     = "zones"          // the link between a zoned lab's switches
	MinFlapLength = time.Millisecond // links[].flap.down
	// MaxUntimedFlapEnd bounds when a ping-pong cell's flap ends (at +
	// down): its cells last as long as their requests take, so no test
	// time bounds the schedule.
	MaxUntimedFlapEnd = 10 * time.Minute
)

// FlapWindow is what a cell's flaps must fit in. Socket tests have a
// time (Test: the shortest test's omit + duration) and every flap ends
// before it. Ping-pong's cells (Test 0) are chunks of sizes that last as
// long as their requests take: there every flap ends by
// MaxUntimedFlapEnd and is shorter than one request's timeout (Request),
// so that a request held up by the flap can outlast it rather than fail
// by construction.
type FlapWindow struct {
	Test    time.Duration
	Request time.Duration
}

// Delays reports whether the link needs something that delays frames
// (netem or the delay line): a delay, jitter or loss.
func (l Link) Delays() bool { return l.Delay != 0 || l.Jitter != 0 || l.Loss != 0 }

// ValidateLinks checks links on their own: bounds, and flaps that end
// in their window (w: before the shortest test ends, or for ping-pong
// within its bound; neither: tests without a duration, where a flap is
// refused). field names the list in the spec ("links",
// "impairments.NAME"). Names are checked against a topology by
// CheckLinkNames.
func ValidateLinks(field string, links []Link, w FlapWindow) error {
	if len(links) > MaxLinks {
		return fmt.Errorf("%s: %d links, more than %d", field, len(links), MaxLinks)
	}
	for i, l := range links {
		if err := l.validate(w); err != nil {
			return fmt.Errorf("%s[%d].%w", field, i, err)
		}
		for j := range i {
			if links[j].Link == l.Link {
				return fmt.Errorf("%s[%d].link %q: listed twice (%s[%d])", field, i, l.Link, field, j)
			}
		}
	}
	return nil
}

func (l Link) validate(w FlapWindow) error {
	if l.Link == "" {
		return errors.New("link: name the link (a host of the topology, or zones)")
	}
	if len(l.Link) > 32 {
		return fmt.Errorf("link %q: longer than 32 characters", l.Link[:32])
	}
	switch {
	case l.Delay < 0 || l.Delay > MaxLinkDelay:
		return fmt.Errorf("delay %s: want 0 to %s (one way)", l.Delay, MaxLinkDelay)
	case l.Jitter < 0 || l.Jitter > l.Delay:
		return fmt.Errorf("jitter %s: want 0 to delay (%s)", l.Jitter, l.Delay)
	case !(l.Loss >= 0 && l.Loss < 100): // NaN fails both
		return fmt.Errorf("loss %g: a percentage in [0, 100)", l.Loss)
	}
	if l.Rate != "" {
		if _, err := ParseRate(l.Rate); err != nil {
			return fmt.Errorf("rate %q: %w", l.Rate, err)
		}
	}
	if l.Link == ZonesLink && l.Delays() {
		return errors.New("delay, jitter, loss: the zones' link is delayed by the conditions zone_delay, zone_jitter and zone_loss")
	}
	if l.Flap == nil {
		if l.Rate == "" && !l.Delays() {
			return fmt.Errorf("link %s: impairs nothing: give delay, jitter, loss, rate or flap", l.Link)
		}
		return nil
	}
	return l.Flap.validate(w)
}

func (f Flap) validate(w FlapWindow) error {
	switch {
	case len(f.At) == 0:
		return errors.New("flap.at: give the times the link goes down, e.g. [2s]")
	case len(f.At) > MaxFlaps:
		return fmt.Errorf("flap.at: %d flaps, more than %d", len(f.At), MaxFlaps)
	case f.Down < MinFlapLength:
		return fmt.Errorf("flap.down %s: want at least %s", f.Down, MinFlapLength)
	case w.Test <= 0 && w.Request <= 0:
		return errors.New("flap: flaps need tests with a duration (socket tests), the time they fall in")
	case w.Test <= 0 && f.Down >= w.Request:
		return fmt.Errorf("flap.down %s: not shorter than pingpong.timeout (%s), so every request it holds up would time out", f.Down, w.Request)
	case w.Test > 0 && f.Down >= w.Test:
		return fmt.Errorf("flap.down %s: not shorter than the shortest test (%s)", f.Down, w.Test)
	}
	// Each time is bounded on its own before any is added to another: a
	// sum near 2^63 ns wraps around to a negative time, which every bound
	// below would pass. Down is bounded above.
	for i, at := range f.At {
		switch {
		case at < 0:
			return fmt.Errorf("flap.at[%d] %s: want 0 or later (from the cell's start)", i, at)
		case w.Test > 0 && at >= w.Test:
			return fmt.Errorf("flap.at[%d] %s: not before the shortest test's end (%s)", i, at, w.Test)
		case w.Test <= 0 && at > MaxUntimedFlapEnd:
			return fmt.Errorf("flap.at[%d] %s: after %s (ping-pong's bound from the cell's start)", i, at, MaxUntimedFlapEnd)
		case i > 0 && at < f.At[i-1]+f.Down:
			return fmt.Errorf("flap.at[%d] %s: before the flap at %s is up again (down %s)", i, at, f.At[i-1], f.Down)
		case w.Test > 0 && at+f.Down >= w.Test:
			return fmt.Errorf("flap.at[%d] %s: with down %s it ends at %s, not before the shortest test's end (%s)", i, at, f.Down, at+f.Down, w.Test)
		case w.Test <= 0 && at+f.Down > MaxUntimedFlapEnd:
			return fmt.Errorf("flap.at[%d] %s: with down %s it ends at %s, after %s (ping-pong's bound from the cell's start)", i, at, f.Down, at+f.Down, MaxUntimedFlapEnd)
		}
	}
	return nil
}

// CheckLinkNames refuses a link the topology lacks: names are the links
// it has (a driver's LinkNames: hosts' uplinks or a chain's hops, and
// zones when the lab is zoned); field names the list in the spec.
func CheckLinkNames(field string, links []Link, names []string) error {
	for i, l := range links {
		if slices.Contains(names, l.Link) {
			continue
		}
		if l.Link == ZonesLink {
			return fmt.Errorf("%s[%d].link zones: the lab has no zones (set zone_hosts or zone_delay)", field, i)
		}
		return fmt.Errorf("%s[%d].link %q: the lab has no such link (it has %s)", field, i, l.Link, strings.Join(names, ", "))
	}
	return nil
}

// Impairments are named lists of links (a spec's impairments), one of
// which the condition impairment selects per lab, so that impaired and
// clean labs run side by side as variants.
type Impairments map[string][]Link

// MaxImpairments bounds a spec's impairments.
const MaxImpairments = 32

// Validate checks each list (as ValidateLinks) and its name, in name
// order so that the first error is always the same.
func (im Impairments) Validate(w FlapWindow) error {
	if len(im) > MaxImpairments {
		return fmt.Errorf("impairments: %d, more than %d", len(im), MaxImpairments)
	}
	for _, name := range slices.Sorted(maps.Keys(im)) {
		if !ClusterNameRE.MatchString(name) {
			return fmt.Errorf("impairments.%s: name it with 1-32 of a-z, 0-9 and -", name)
		}
		if len(im[name]) == 0 {
			return fmt.Errorf("impairments.%s: lists no link", name)
		}
		if err := ValidateLinks("impairments."+name, im[name], w); err != nil {
			return err
		}
	}
	return nil
}

// Merge returns the links of a lab: links, with each link of the
// selected impairment replacing one of the same name or added.
func Merge(links, impairment []Link) []Link {
	if len(impairment) == 0 {
		return links
	}
	out := slices.Clone(links)
	for _, l := range impairment {
		if i := slices.IndexFunc(out, func(o Link) bool { return o.Link == l.Link }); i >= 0 {
			out[i] = l
		} else {
			out = append(out, l)
		}
	}
	return out
}

// LinkDelay is the delay condition as a duration (0: none; Validate has
// refused what does not parse).
func (s Set) LinkDelay() time.Duration {
	d, err := time.ParseDuration(s.Delay)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// WithDelay returns the links a lab builds under the delay condition:
// every link named in names (a topology's uplinks or hops) delayed by d,
// except links that set a delay or jitter of their own; links keep
// their other impairments and flaps. Without the condition, links as
// they are.
func WithDelay(links []Link, names []string, d time.Duration) []Link {
	if d <= 0 {
		return links
	}
	out := slices.Clone(links)
	for _, name := range names {
		i := slices.IndexFunc(out, func(l Link) bool { return l.Link == name })
		switch {
		case i < 0:
			out = append(out, Link{Link: name, Delay: d})
		case out[i].Delay == 0 && out[i].Jitter == 0:
			out[i].Delay = d
		}
	}
	return out
}
