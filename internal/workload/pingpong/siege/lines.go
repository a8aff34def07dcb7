package siege

import (
	"bufio"
	"io"

	"github.com/cnperf/cnperf/internal/record"
)

// lines writes the samples siege measures from a goroutine of its own,
// through a buffer that is flushed whenever no sample waits: a request's
// worker never waits on encoding a line or on the pipe to cnperf (each
// line written in turn, under the lock the workers share, cost 7 % of
// ping-pong's requests per second; docs/workloads.md), and a line still
// leaves as soon as the writer is idle, so an interrupted siege keeps
// what it measured.
type lines struct {
	ch   chan record.Sample
	done chan error
}

// lineBacklog is how many samples may wait for the writer before a
// request's worker waits for it.
const lineBacklog = 4096

// writeLines starts the writer: encoder makes, for the buffered writer it
// is given, the function that writes one sample.
func writeLines(w io.Writer, encoder func(io.Writer) func(record.Sample) error) *lines {
	l := &lines{ch: make(chan record.Sample, lineBacklog), done: make(chan error, 1)}
	bw := bufio.NewWriterSize(w, 64<<10)
	write := encoder(bw)
	go func() {
		var err error
		for s := range l.ch {
			if err == nil {
				err = write(s)
			}
			if err == nil && len(l.ch) == 0 {
				err = bw.Flush()
			}
		}
		if err == nil {
			err = bw.Flush()
		}
		l.done <- err
	}()
	return l
}

// add hands the writer a sample (after the ones before it).
func (l *lines) add(s record.Sample) { l.ch <- s }

// close writes what waits and reports the first write error.
func (l *lines) close() error {
	close(l.ch)
	return <-l.done
}
