// Package progress draws a run's progress: cells, samples and the time left.
// On a terminal it redraws one line; elsewhere (CI logs, pipes) it prints a
// line at most every few seconds, so logs stay readable.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Bar tracks a run.
type Bar struct {
	mu          sync.Mutex
	w           io.Writer
	tty         bool
	cells       int
	samples     int
	doneCells   int
	doneSamples int
	failed      int
	start       time.Time
	lastDraw    time.Time
	every       time.Duration
	lastWidth   int
}

// New returns a bar for cells cells and samples expected samples, drawn on
// w. With samples 0 the bar counts cells: for workloads whose samples
// arrive in bursts (a socket test prints its intervals as it ends).
func New(w io.Writer, cells, samples int) *Bar {
	b := &Bar{w: w, cells: cells, samples: samples, start: time.Now(), every: 5 * time.Second}
	if f, ok := w.(*os.File); ok {
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			b.tty, b.every = true, 200*time.Millisecond
		}
	}
	return b
}

// Sample records one sample.
func (b *Bar) Sample(failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.doneSamples++
	if failed {
		b.failed++
	}
	b.drawLocked(false)
}

// Cell records a finished cell.
func (b *Bar) Cell() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.doneCells++
	b.drawLocked(false)
}

// Done draws the final state and ends the line.
func (b *Bar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drawLocked(true)
	if b.tty {
		fmt.Fprintln(b.w)
	}
}

// Line renders the bar's text.
func (b *Bar) Line() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lineLocked()
}

func (b *Bar) lineLocked() string {
	frac, done := 0.0, b.doneSamples
	switch {
	case b.samples > 0:
		frac = float64(b.doneSamples) / float64(b.samples)
	case b.cells > 0:
		frac, done = float64(b.doneCells)/float64(b.cells), b.doneCells
	}
	if frac > 1 {
		frac = 1
	}
	const width = 24
	fill := int(frac * width)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	eta := "?"
	if el := time.Since(b.start); done > 0 && frac < 1 {
		left := time.Duration(float64(el) / frac * (1 - frac))
		eta = left.Round(time.Second).String()
	} else if frac >= 1 {
		eta = "0s"
	}
	s := fmt.Sprintf("[%s] %3.0f%%  cells %d/%d  samples %d/%d", bar, frac*100, b.doneCells, b.cells, b.doneSamples, b.samples)
	if b.samples == 0 {
		s = fmt.Sprintf("[%s] %3.0f%%  cells %d/%d  records %d", bar, frac*100, b.doneCells, b.cells, b.doneSamples)
	}
	if b.failed > 0 {
		s += fmt.Sprintf("  failed %d", b.failed)
	}
	return s + "  ETA " + eta
}

func (b *Bar) drawLocked(force bool) {
	if !force && time.Since(b.lastDraw) < b.every {
		return
	}
	b.lastDraw = time.Now()
	line := b.lineLocked()
	if b.tty {
		pad := ""
		if n := b.lastWidth - len(line); n > 0 {
			pad = strings.Repeat(" ", n)
		}
		b.lastWidth = len(line)
		fmt.Fprintf(b.w, "\r%s%s", line, pad)
		return
	}
	fmt.Fprintln(b.w, line)
}
