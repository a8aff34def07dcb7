package machine

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/sysinfo"
)

// Options say how to profile.
type Options struct {
	Name        string
	Repeat      int           // repetitions of each measured feature, 1..MaxRepeat
	Dir         string        // where the disk test's file goes ("": a temporary directory)
	DiskBytes   int64         // the disk test's file size
	NetworkTime time.Duration // each network repetition's measured time
	// Network is false to skip the network feature (it needs root and
	// builds a lab); SkipReason then says why.
	Network    bool
	SkipReason string
	Exe        string // cnperf's binary, for the lab
	// Lab is the binary's drivers and modes, for the network lab.
	Lab     lab.Catalog
	Version string
	Out     io.Writer // progress
}

// Measure profiles this machine: each measured feature Repeat times,
// interleaved, their medians in Features. o is as Options.Validate
// passed it.
func Measure(ctx context.Context, o Options) (Profile, error) {
	dir, cleanup, err := diskDir(o.Dir)
	if err != nil {
		return Profile{}, err
	}
	defer cleanup()
	m := sysinfo.DescribeMachine()
	p := Profile{Format: Format, Kind: Kind, Name: o.Name, Created: time.Now().UTC(), Cnperf: o.Version, Machine: m, Repeat: o.Repeat,
		Features: map[string]float64{"threads": float64(runtime.NumCPU())}, Runs: map[string][]float64{}, Skipped: map[string]string{}}
	if m.MemTotal > 0 {
		p.Features["memory_bytes"] = float64(m.MemTotal)
	}
	if !o.Network {
		p.Skipped["network"] = o.SkipReason
	}
	for i := range o.Repeat {
		if err := ctx.Err(); err != nil {
			return Profile{}, err
		}
		fmt.Fprintf(o.Out, "cnperf: machine profile: repetition %d/%d\n", i+1, o.Repeat)
		if err := p.measureOnce(ctx, o, dir); err != nil {
			return Profile{}, err
		}
	}
	for k, runs := range p.Runs {
		p.Features[k] = Median(runs)
	}
	p.Notes = append(p.Notes, fmt.Sprintf("disk: %d MiB file in %s, file system %s", o.DiskBytes>>20, dir, fsName(dir)),
		fmt.Sprintf("memory bandwidth: triad over 3 arrays of %d MiB on %d threads, best of 5 passes", triadBytes()>>20, runtime.GOMAXPROCS(0)),
		fmt.Sprintf("processing: SHA-256 of %d MiB on one thread", processingBytes>>20))
	if o.Network {
		p.Notes = append(p.Notes, fmt.Sprintf("network: one TCP stream for %s (after %s warm-up) between two namespaces of a bare lab", o.NetworkTime, networkWarmUp))
	}
	return p, nil
}

// measureOnce runs every measured feature once and appends its value.
func (p *Profile) measureOnce(ctx context.Context, o Options, dir string) error {
	p.Runs["processing_s"] = append(p.Runs["processing_s"], ProcessingTime())
	p.Runs["memory_bandwidth"] = append(p.Runs["memory_bandwidth"], MemoryBandwidth())
	runtime.GC() // the triad's arrays are garbage; give them back before the disk test
	d, err := DiskSpeed(dir, o.DiskBytes)
	if err != nil {
		return err
	}
	p.Runs["disk_write"] = append(p.Runs["disk_write"], d.Write)
	p.Runs["disk_read"] = append(p.Runs["disk_read"], d.Read)
	if len(p.Runs["disk_read"]) == 1 {
		p.Notes = append(p.Notes, "disk: "+d.Method)
	}
	if !o.Network {
		return nil
	}
	bps, err := Network(ctx, o.Lab, o.Exe, o.NetworkTime)
	if err != nil {
		return err
	}
	p.Runs["network"] = append(p.Runs["network"], bps)
	return nil
}

// diskDir returns the directory for the disk test: dir, or a new
// temporary one that cleanup removes.
func diskDir(dir string) (string, func(), error) {
	if dir != "" {
		st, err := os.Stat(dir)
		if err != nil {
			return "", nil, fmt.Errorf("--dir: %w", err)
		}
		if !st.IsDir() {
			return "", nil, fmt.Errorf("--dir %s: not a directory", dir)
		}
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "cnperf-machine-")
	if err != nil {
		return "", nil, fmt.Errorf("disk test directory: %w", err)
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}
