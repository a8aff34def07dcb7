package run

import (
	"path/filepath"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/run/profile"
)

// cellProfile is a cell's stacks being sampled (the lab's profile: on).
type cellProfile struct {
	s   *profile.Session
	ctx *profile.Contexts
}

// startProfile starts sampling the machine's stacks for cell i on e, when
// e's lab is profiled (nil otherwise), with what each of the run's
// processes is: e's servers, its lab's routers and daemons; the other
// labs' processes are "other" (they are not this cell's).
func (r *running) startProfile(i int, e *env) (*cellProfile, error) {
	on, hz := e.lab.Conditions.Profiles()
	if !on {
		return nil, nil
	}
	ctx := profile.NewContexts(r.o.Exe)
	for _, o := range r.envs {
		for _, p := range o.procs {
			ctx.Add(p.PID(), pick(o == e, record.StackServer, record.StackOther))
		}
		for name, p := range o.lab.Processes() {
			ctx.Add(p.PID(), pick(o == e, profile.LabProcess(name), record.StackOther))
		}
	}
	s, err := profile.Start(filepath.Join(r.o.Dir, record.StacksFile(i)+".perf.data"), hz)
	if err != nil {
		return nil, err
	}
	return &cellProfile{s: s, ctx: ctx}, nil
}

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
