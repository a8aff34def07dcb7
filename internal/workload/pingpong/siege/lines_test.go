package siege

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// TestLinesKeepOrderAndEveryLine: the writer apart from the requests
// writes every sample it was handed, in order, also more than its backlog.
func TestLinesKeepOrderAndEveryLine(t *testing.T) {
	var out bytes.Buffer
	l := writeLines(&out, func(w io.Writer) func(record.Sample) error {
		enc := json.NewEncoder(w)
		return func(s record.Sample) error { return enc.Encode(s) }
	})
	const n = 3*lineBacklog + 7
	for i := range n {
		l.add(record.Sample{Size: i})
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(got) != n {
		t.Fatalf("%d lines, want %d", len(got), n)
	}
	for i, line := range got {
		var s record.Sample
		if err := json.Unmarshal([]byte(line), &s); err != nil || s.Size != i {
			t.Fatalf("line %d: %q (%v), want size %d", i, line, err, i)
		}
	}
}

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestLinesSayAWriteFailed: a reader that went away is reported at close,
// and adding samples after it does not block.
func TestLinesSayAWriteFailed(t *testing.T) {
	l := writeLines(brokenPipe{}, func(w io.Writer) func(record.Sample) error {
		enc := json.NewEncoder(w)
		return func(s record.Sample) error { return enc.Encode(s) }
	})
	for range 2 * lineBacklog {
		l.add(record.Sample{})
	}
	if err := l.close(); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("close = %v, want the broken pipe", err)
	}
}

// TestLinesLeaveWhileIdle: a sample reaches the reader without close,
// within a flush of the writer, so that a siege killed while idle has
// handed over what it measured.
func TestLinesLeaveWhileIdle(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	l := writeLines(w, func(w io.Writer) func(record.Sample) error {
		enc := json.NewEncoder(w)
		return func(s record.Sample) error { return enc.Encode(s) }
	})
	l.add(record.Sample{Size: 42})
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, `"size":42`) {
			t.Errorf("read %q, want the sample of size 42", line)
		}
	case <-time.After(50 * flushEvery):
		t.Fatalf("no line within %s of an idle writer", 50*flushEvery)
	}
	r.Close() // the writer's flush at close fails on the closed pipe
	_ = l.close()
}
