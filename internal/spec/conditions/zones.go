package conditions

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Zones split a lab's hosts in two, as Kratzke (2015) split its deployment
// across availability zones and regions: siege and ping in one, pong in
// the other. Each zone has its own underlay switch, and the two switches
// are joined through a link that delays (and may lose) frames each way.
// Two zones are enough for every placement the seeds describe; one delay
// between them keeps a variant's meaning plain (same-zone, cross-zone,
// cross-region are one field's values).

// Bounds of the zone fields.
const (
	MaxZoneDelay = time.Hour // zone_delay, zone_jitter
	maxZoneHosts = 64
)

// Where a lab's zone link delays frames (ZoneVia, and what the lab
// records).
const (
	ViaNetem     = "netem"
	ViaDelayline = "delayline"
)

var zoneHostRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,9}$`)

// Zoned reports whether the set splits the lab into zones: any zone field
// makes it so, even at zero delay (which measures what the link itself
// costs).
func (s Set) Zoned() bool {
	return s.ZoneHosts != "" || s.ZoneDelay != 0 || s.ZoneJitter != 0 || s.ZoneLoss != 0 || s.ZoneVia != ""
}

func (s Set) validateZones() error {
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"zone_delay", s.ZoneDelay}, {"zone_jitter", s.ZoneJitter}} {
		if f.v < 0 || f.v > MaxZoneDelay {
			return fmt.Errorf("%s %s: want 0 to %s (one way)", f.name, f.v, MaxZoneDelay)
		}
	}
	if s.ZoneJitter > s.ZoneDelay {
		return fmt.Errorf("zone_jitter %s: at most zone_delay (%s), so that no frame is due before it arrived", s.ZoneJitter, s.ZoneDelay)
	}
	if !(s.ZoneLoss >= 0 && s.ZoneLoss < 100) { // NaN fails both
		return fmt.Errorf("zone_loss %g: a percentage in [0, 100)", s.ZoneLoss)
	}
	switch s.ZoneVia {
	case "", ViaNetem, ViaDelayline:
	default:
		return fmt.Errorf("zone_via %q: use %s or %s (empty: netem where the kernel has it)", s.ZoneVia, ViaNetem, ViaDelayline)
	}
	if s.ZoneHosts != "" {
		if _, err := splitHosts(s.ZoneHosts); err != nil {
			return fmt.Errorf("zone_hosts %q: %w", s.ZoneHosts, err)
		}
	}
	return nil
}

func splitHosts(list string) ([]string, error) {
	names := strings.Split(list, ",")
	if len(names) > maxZoneHosts {
		return nil, fmt.Errorf("at most %d hosts", maxZoneHosts)
	}
	for i, n := range names {
		if !zoneHostRE.MatchString(n) {
			return nil, fmt.Errorf("%q: want host names (1-10 of a-z, 0-9, starting with a letter) separated by commas, no spaces", n)
		}
		if slices.Contains(names[:i], n) {
			return nil, fmt.Errorf("%s named twice", n)
		}
	}
	return names, nil
}

// RemoteZone returns the hosts of a lab with these hosts (in the
// topology's order) that sit in the second zone: ZoneHosts, or the last
// host when it is empty. Nil when the set is not zoned. It refuses a host
// the lab does not have and a split that leaves the first zone empty.
func (s Set) RemoteZone(hosts []string) ([]string, error) {
	if !s.Zoned() {
		return nil, nil
	}
	if len(hosts) < 2 {
		return nil, errors.New("zones need at least two hosts")
	}
	if s.ZoneHosts == "" {
		return hosts[len(hosts)-1:], nil
	}
	remote, err := splitHosts(s.ZoneHosts)
	if err != nil {
		return nil, fmt.Errorf("zone_hosts %q: %w", s.ZoneHosts, err)
	}
	for _, h := range remote {
		if !slices.Contains(hosts, h) {
			return nil, fmt.Errorf("zone_hosts %q: the lab has no host %s (it has %s)", s.ZoneHosts, h, strings.Join(hosts, ", "))
		}
	}
	if len(remote) == len(hosts) {
		return nil, fmt.Errorf("zone_hosts %q: every host in the remote zone leaves the first one empty", s.ZoneHosts)
	}
	return remote, nil
}

// ZoneQueueBytes bounds what the zone link holds each way: the
// bandwidth-delay product at the lab's bandwidth over the longest delay,
// plus 1 MiB (8 ms at 1 Gbit/s) for the shaper's burst, 64 kB frames and
// the delay line's own late wake-ups, which hold frames longer; without a
// bandwidth, a fixed cap. A link paced at the bandwidth does not fill it; a
// faster sender overflows it, and the overflow is dropped and counted.
func (s Set) ZoneQueueBytes() int {
	const (
		slack   = 1 << 20
		noLimit = 64 << 20 // no bandwidth: about 50 ms at 10 Gbit/s
	)
	if s.Bandwidth == "" {
		return noLimit
	}
	rate, err := ParseRate(s.Bandwidth)
	if err != nil {
		return noLimit
	}
	bdp := float64(rate) / 8 * (s.ZoneDelay + s.ZoneJitter).Seconds()
	return int(math.Min(bdp, 1<<30)) + slack
}
