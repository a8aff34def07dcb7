package run

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec"
)

// checkLinks refuses a spec's links on a driver that cannot impair links
// and links a lab's topology lacks, before any lab is built.
func checkLinks(cat lab.Catalog, s spec.Spec, cfg lab.Config) error {
	if len(s.Links) == 0 {
		return nil
	}
	for _, pl := range s.Labs() {
		d, err := cat.Driver(pl.Driver)
		if err != nil {
			return nil // CheckDrivers says so
		}
		li, ok := d.(lab.LinkImpairer)
		if !ok {
			return fmt.Errorf("links: driver %s does not impair links (the netns driver does)", pl.Driver)
		}
		c := cfg
		c.Conditions, c.Links = pl.Conditions, pl.Links
		if err := li.CheckLinks(c); err != nil {
			return err
		}
	}
	return nil
}
