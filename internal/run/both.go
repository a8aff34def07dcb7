package run

import (
	"context"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// both runs a spec's ping-pong test and its socket tests on the same
// labs, their cells interleaved: each unit is one of either kind, run by
// its own experiment, so that the two are measured on the same setups
// over the same stretch of time (as the 2017 thesis measured both).
type both struct {
	pp   *pingPong
	sk   *socketCells
	plan []bothUnit
}

// bothUnit is a unit of one kind: a chunk of sizes or a case repetition.
type bothUnit struct {
	socket bool
	unit   int
}

func newBoth(pp *pingPong, sk *socketCells) *both {
	b := &both{pp: pp, sk: sk}
	// Spread the kinds over the run in proportion: unit k of the kind
	// with n units falls at k/n of the run, so that neither kind is
	// measured in one stretch of it.
	n, m := pp.units(), sk.units()
	for i, j := 0, 0; i < n || j < m; {
		if j >= m || (i < n && i*m <= j*n) {
			b.plan = append(b.plan, bothUnit{unit: i})
			i++
		} else {
			b.plan = append(b.plan, bothUnit{socket: true, unit: j})
			j++
		}
	}
	return b
}

// labConfig is a topology with the hosts each kind needs (ping-pong's
// siege, ping and pong; the tests' client and server), and every port
// either publishes.
func (b *both) labConfig() lab.Config {
	p, s := b.pp.labConfig(), b.sk.labConfig()
	cfg := p
	cfg.Topology = lab.Topology{Hosts: append(append([]lab.HostSpec(nil), p.Topology.Hosts...), s.Topology.Hosts...)}
	cfg.Publish = append(append([]lab.Port(nil), p.Publish...), lab.Port{Number: s.Port, Protocol: "tcp"})
	cfg.Publish = append(cfg.Publish, s.Publish...)
	return cfg
}

func (b *both) servers(e *env) ([]serverRun, error) {
	p, err := b.pp.servers(e)
	if err != nil {
		return nil, err
	}
	s, err := b.sk.servers(e)
	return append(p, s...), err
}

func (b *both) ready(ctx context.Context, e *env) error {
	if err := b.pp.ready(ctx, e); err != nil {
		return err
	}
	return b.sk.ready(ctx, e)
}

func (b *both) units() int { return len(b.plan) }

// expectedSamples is 0: the socket tests' records arrive in bursts, so
// the progress bar counts cells.
func (b *both) expectedSamples(int) int { return 0 }

func (b *both) cell(e *env, u int, cell *record.Cell, app *appender) (cellRun, error) {
	if k := b.plan[u]; k.socket {
		return b.sk.cell(e, k.unit, cell, app)
	}
	return b.pp.cell(e, b.plan[u].unit, cell, app)
}

// describeCell records the unit as its kind numbers it: a ping-pong cell
// its chunk of sizes, a socket cell its case and repetition.
func (b *both) describeCell(u int, cell *record.Cell) {
	k := b.plan[u]
	cell.Chunk = k.unit
	if k.socket {
		b.sk.describeCell(k.unit, cell)
	} else {
		b.pp.describeCell(k.unit, cell)
	}
}

func (b *both) describeRun(meta *record.Meta) {
	b.pp.describeRun(meta)
	b.sk.describeRun(meta)
}
