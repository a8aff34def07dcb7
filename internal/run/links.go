package run

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// checkLinks refuses a spec's links on a driver that cannot impair links
// and links a lab's topology lacks, and its disruptions on a driver that
// cannot make them, before any lab is built.
func checkLinks(cat lab.Catalog, s spec.Spec, cfg lab.Config, opts map[string]any) error {
	for _, pl := range s.Labs() {
		if d, err := cat.Driver(pl.Driver); err == nil && len(s.Disrupt) > 0 && !d.Capabilities(opts[pl.Driver]).Disrupts {
			return fmt.Errorf("disrupt: driver %s restarts no cluster daemons (%s does, on a cnperf test cluster)", pl.Driver, driversThat(cat, func(c lab.Capabilities) bool { return c.Disrupts }))
		}
	}
	if len(s.Links) == 0 && len(s.Impairments) == 0 {
		return nil
	}
	for _, pl := range s.Labs() {
		d, err := cat.Driver(pl.Driver)
		if err != nil {
			return nil // CheckDrivers says so
		}
		if len(pl.Links) == 0 {
			continue // a clean variant
		}
		if !d.Capabilities(opts[pl.Driver]).ImpairsLinks {
			return fmt.Errorf("links: driver %s does not impair links (the %s drivers do)", pl.Driver, driversThat(cat, func(c lab.Capabilities) bool { return c.ImpairsLinks }))
		}
		c := cfg
		c.Conditions, c.Links, c.Options = pl.Conditions, pl.Links, opts[pl.Driver]
		names, err := d.LinkNames(c)
		if err != nil {
			return err
		}
		if err := conditions.CheckLinkNames("links", s.Links, names); err != nil {
			return err
		}
		if name := pl.Conditions.Impairment; name != "" {
			if err := conditions.CheckLinkNames("impairments."+name, s.Impairments[name], names); err != nil {
				return err
			}
		}
	}
	return nil
}
