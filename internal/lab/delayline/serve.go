package delayline

import "context"

// Serve opens the line c describes and runs it until ctx ends, as
// `cnperf serve delayline` does: logf hears its setup once it is open and,
// at the end, each direction's counters, the line's own cost.
func Serve(ctx context.Context, c Config, logf func(format string, a ...any)) error {
	l, err := Open(c)
	if err != nil {
		return err
	}
	logf("%s <-> %s, delay %s ± %s, loss %g %%, queue %d bytes each way",
		c.Local, c.Remote, c.Delay, c.Jitter, c.LossPercent, c.QueueBytes)
	err = l.Run(ctx)
	for _, d := range l.Stats() {
		logf("%s to %s: %d frames, %d bytes, %d lost, %d dropped (queue full), %d truncated, peak queue %d bytes, late median %s p99 %s max %s",
			d.From, d.To, d.Frames, d.Bytes, d.Lost, d.Dropped, d.Truncated, d.PeakQueueBytes, d.LateMedian, d.LateP99, d.LateMax)
	}
	return err
}
