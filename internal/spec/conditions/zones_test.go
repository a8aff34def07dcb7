package conditions

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidateZones(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  Set
		want string // "" for valid
	}{
		{"cross-region", Set{ZoneDelay: 110 * time.Millisecond, ZoneJitter: 5 * time.Millisecond, ZoneLoss: 0.5, ZoneHosts: "pong"}, ""},
		{"hosts alone", Set{ZoneHosts: "siege,ping"}, ""},
		{"an hour", Set{ZoneDelay: time.Hour}, ""},
		{"via delayline", Set{ZoneDelay: time.Millisecond, ZoneVia: "delayline"}, ""},
		{"negative delay", Set{ZoneDelay: -time.Millisecond}, "zone_delay -1ms: want 0 to 1h0m0s"},
		{"delay above an hour", Set{ZoneDelay: time.Hour + time.Nanosecond}, "zone_delay 1h0m0.000000001s"},
		{"negative jitter", Set{ZoneDelay: time.Second, ZoneJitter: -1}, "zone_jitter -1ns"},
		{"jitter above delay", Set{ZoneDelay: time.Millisecond, ZoneJitter: 2 * time.Millisecond}, "zone_jitter 2ms: at most zone_delay (1ms)"},
		{"loss 100", Set{ZoneLoss: 100}, "zone_loss 100: a percentage in [0, 100)"},
		{"loss negative", Set{ZoneLoss: -0.1}, "zone_loss -0.1"},
		{"loss NaN", Set{ZoneLoss: math.NaN()}, "zone_loss NaN"},
		{"via unknown", Set{ZoneVia: "tc"}, `zone_via "tc"`},
		{"hosts with a space", Set{ZoneHosts: "ping, pong"}, `zone_hosts "ping, pong"`},
		{"hosts repeated", Set{ZoneHosts: "pong,pong"}, `zone_hosts "pong,pong": pong named twice`},
		{"hosts empty name", Set{ZoneHosts: "pong,"}, `zone_hosts "pong,"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.set.Validate(2)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("Validate = %v, want it to start %q", err, tc.want)
			}
		})
	}
}

func TestRemoteZone(t *testing.T) {
	pp := []string{"siege", "ping", "pong"}
	for _, tc := range []struct {
		set   Set
		hosts []string
		want  []string
		err   string
	}{
		{Set{}, pp, nil, ""},
		{Set{Bandwidth: "1gbit"}, pp, nil, ""},
		{Set{ZoneDelay: time.Millisecond}, pp, []string{"pong"}, ""},
		{Set{ZoneLoss: 1}, []string{"client", "server"}, []string{"server"}, ""},
		{Set{ZoneHosts: "ping,pong"}, pp, []string{"ping", "pong"}, ""},
		{Set{ZoneHosts: "server"}, pp, nil, "the lab has no host server"},
		{Set{ZoneHosts: "siege,ping,pong"}, pp, nil, "leaves the first one empty"},
		{Set{ZoneDelay: time.Millisecond}, []string{"alone"}, nil, "at least two hosts"},
	} {
		got, err := tc.set.RemoteZone(tc.hosts)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: RemoteZone = %v, %v; want error %q", tc.set, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%+v: RemoteZone = %v, %v; want %v", tc.set, got, err, tc.want)
		}
	}
}

func TestZoneQueueBytes(t *testing.T) {
	// 1 Gbit/s for 20 ms is 2.5 MB in flight each way.
	s := Set{Bandwidth: "1gbit", ZoneDelay: 20 * time.Millisecond}
	if got, want := s.ZoneQueueBytes(), 2_500_000+1<<20; got != want {
		t.Errorf("1gbit, 20ms: %d bytes, want %d", got, want)
	}
	// Jitter holds frames longer: the worst case counts.
	s.ZoneJitter = 20 * time.Millisecond
	if got, want := s.ZoneQueueBytes(), 5_000_000+1<<20; got != want {
		t.Errorf("1gbit, 20±20ms: %d bytes, want %d", got, want)
	}
	if got := (Set{ZoneDelay: time.Second}).ZoneQueueBytes(); got != 64<<20 {
		t.Errorf("no bandwidth: %d bytes, want the fixed cap", got)
	}
	if got := (Set{Bandwidth: "1000gbit", ZoneDelay: time.Hour}).ZoneQueueBytes(); got != 1<<30+1<<20 {
		t.Errorf("huge product: %d bytes, want it capped at 1 GiB", got)
	}
}

func TestZoneLabel(t *testing.T) {
	s := Set{ZoneHosts: "siege,ping", ZoneDelay: 50 * time.Millisecond, ZoneJitter: time.Millisecond, ZoneLoss: 1.5, ZoneVia: "delayline"}
	if got := s.Label(); got != "zone=siege:ping,zdelay=50ms,zjitter=1ms,zloss=1.5,zvia=delayline" {
		t.Errorf("Label = %q", got)
	}
}
