package siege

import (
	"bufio"
	"io"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// lines writes the samples siege measures from a goroutine of its own,
// through a buffer flushed every flushEvery and at close: a request's
// worker never waits on encoding a line or on the pipe to cnperf (each
// line written in turn, under the lock the workers share, cost 7 % of
// ping-pong's requests per second; docs/workloads.md), cnperf is not woken
// per request, and an interrupted siege keeps what it measured.
type lines struct {
	ch   chan record.Sample
	done chan error
}

// lineBacklog is how many samples may wait for the writer before a
// request's worker waits for it.
const lineBacklog = 4096

// flushEvery is how often the writer hands what it has to the pipe. Not
// every line as it is known: each write woke cnperf, which read, decoded
// and stored that one line while the next request ran, on the CPUs the
// measured path shares (2 vCPUs: requests per second 3,620 against
// 3,840-3,900 batched, and host mode's transfer rate at 0.94 of bare's,
// not 0.99-1.01; docs/workloads.md). A tenth of a second is what a
// killed siege can lose; a stopped one (SIGINT, SIGTERM) writes all.
const flushEvery = 100 * time.Millisecond

// writeLines starts the writer: encoder makes, for the buffered writer it
// is given, the function that writes one sample.
func writeLines(w io.Writer, encoder func(io.Writer) func(record.Sample) error) *lines {
	l := &lines{ch: make(chan record.Sample, lineBacklog), done: make(chan error, 1)}
	bw := bufio.NewWriterSize(w, 64<<10)
	write := encoder(bw)
	go func() {
		var err error
		tick := time.NewTicker(flushEvery)
		defer tick.Stop()
		for {
			select {
			case s, ok := <-l.ch:
				if !ok {
					if err == nil {
						err = bw.Flush()
					}
					l.done <- err
					return
				}
				if err == nil {
					err = write(s)
				}
			case <-tick.C:
				if err == nil && bw.Buffered() > 0 {
					err = bw.Flush()
				}
			}
		}
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
