package run

import (
	"context"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// part is what one kind of a spec's tests supplies the runner: the
// socket tests (socketCells), or a size sweep (pingPong). How servers and
// clients are started, waited on, read, metered and charged is the
// runner's, one path for every kind (startServers, runCell, measureCell).
type part interface {
	// labConfig says which topology (hosts and the roles of the endpoints
	// on them) and ports a lab needs (name and mode are filled in by the
	// runner).
	labConfig() lab.Config
	// servers are the server processes to start on e, in order.
	servers(e *env) ([]serverRun, error)
	// ready waits, once the servers are up, until the workload answers
	// as its client will ask (nil at once when a bound port is enough).
	ready(ctx context.Context, e *env) error
	// units is the number of units of work each mode runs; samples the
	// samples each mode's units print (0: they arrive in bursts, and the
	// progress bar counts cells).
	units() int
	samples() int
	// cell is unit u on e as cell cell: its clients, each line they print
	// stored with app and counted in cell, and its cost line.
	cell(e *env, u int, cell *record.Cell, app *appender) (cellRun, error)
	// describeCell fills what the cell plan says about unit u.
	describeCell(u int, cell *record.Cell)
	// describeRun fills what the run's record says of the plan.
	describeRun(meta *record.Meta)
}

// experiment is a spec's tests run over cells on the same labs: the
// parts' units interleaved, each run by its part, so that the kinds are
// measured on the same setups over the same stretch of time (as the 2017
// thesis measured ping-pong and socket tests).
type experiment struct {
	parts []part
	plan  []unitOf
}

// unitOf is unit unit of part part: a chunk of sizes or a case
// repetition.
type unitOf struct{ part, unit int }

func newExperiment(parts ...part) *experiment {
	x := &experiment{parts: parts}
	// Spread the parts over the run in proportion: unit k of a part with
	// n units falls at k/n of the run, the earlier part first on a tie,
	// so that no kind is measured in one stretch of it.
	next := make([]int, len(parts))
	for {
		p := -1
		for i, q := range parts {
			if next[i] < q.units() && (p < 0 || next[i]*parts[p].units() < next[p]*q.units()) {
				p = i
			}
		}
		if p < 0 {
			return x
		}
		x.plan = append(x.plan, unitOf{p, next[p]})
		next[p]++
	}
}

// labConfig is a topology with the hosts each part needs (ping-pong's
// siege, ping and pong; the tests' client and server), and every port
// any publishes.
func (x *experiment) labConfig() lab.Config {
	cfg := x.parts[0].labConfig()
	for _, p := range x.parts[1:] {
		c := p.labConfig()
		cfg.Topology = lab.Topology{Hosts: append(append([]lab.HostSpec(nil), cfg.Topology.Hosts...), c.Topology.Hosts...)}
		cfg.Publish = append(append(append([]lab.Port(nil), cfg.Publish...), lab.Port{Number: c.Port, Protocol: "tcp"}), c.Publish...)
	}
	return cfg
}

func (x *experiment) servers(e *env) ([]serverRun, error) {
	var out []serverRun
	for _, p := range x.parts {
		s, err := p.servers(e)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

func (x *experiment) ready(ctx context.Context, e *env) error {
	for _, p := range x.parts {
		if err := p.ready(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func (x *experiment) units() int { return len(x.plan) }

// expectedSamples is what the progress bar expects over all modes: 0
// (count cells) when a part's samples arrive in bursts.
func (x *experiment) expectedSamples(modes int) int {
	n := 0
	for _, p := range x.parts {
		if p.samples() == 0 {
			return 0
		}
		n += p.samples()
	}
	return n * modes
}

func (x *experiment) cell(e *env, u int, cell *record.Cell, app *appender) (cellRun, error) {
	k := x.plan[u]
	return x.parts[k.part].cell(e, k.unit, cell, app)
}

// describeCell records the unit as its part numbers it: a ping-pong cell
// its chunk of sizes, a socket cell its case and repetition.
func (x *experiment) describeCell(u int, cell *record.Cell) {
	k := x.plan[u]
	cell.Chunk = k.unit
	x.parts[k.part].describeCell(k.unit, cell)
}

func (x *experiment) describeRun(meta *record.Meta) {
	for _, p := range x.parts {
		p.describeRun(meta)
	}
}
