package udpseq

import "testing"

// udptest's tracker: duplicates told apart within TrackWindow, jumps beyond
// MaxJump rejected.
func window() Tracker { return Tracker{Window: TrackWindow, MaxJump: MaxJump} }

func TestTracker(t *testing.T) {
	tests := []struct {
		name string
		seqs []uint64
		want Counts
		next uint64
	}{
		{"in order", []uint64{0, 1, 2, 3}, Counts{Received: 4}, 4},
		{"brief's example", []uint64{0, 1, 2, 4, 3, 7}, Counts{Received: 6, Lost: 2, OutOfOrder: 1, OffsetSum: 1}, 8},
		{"lost first", []uint64{3, 4}, Counts{Received: 2, Lost: 3}, 5},
		{"duplicates", []uint64{0, 1, 1, 2, 0}, Counts{Received: 3, Duplicates: 2}, 3},
		{"reversed", []uint64{4, 3, 2, 1, 0}, Counts{Received: 5, OutOfOrder: 4, OffsetSum: 1 + 2 + 3 + 4}, 5},
		{"late then duplicate of late", []uint64{0, 5, 2, 2}, Counts{Received: 3, Lost: 3, OutOfOrder: 1, Duplicates: 1, OffsetSum: 3}, 6},
		{"implausible jump rejected", []uint64{0, 1 << 40, 1}, Counts{Received: 2}, 2},
		{"window wraps", []uint64{0, TrackWindow + 5, TrackWindow + 4}, Counts{Received: 3, Lost: TrackWindow + 3, OutOfOrder: 1, OffsetSum: 1}, TrackWindow + 6},
		{"older than the window", []uint64{0, 2, TrackWindow + 10, 1}, Counts{Received: 4, Lost: TrackWindow + 7, OutOfOrder: 1, OffsetSum: TrackWindow + 9}, TrackWindow + 11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := window()
			for _, s := range tc.seqs {
				tr.Observe(s)
			}
			if got := tr.Counts(); got != tc.want {
				t.Errorf("counts = %+v, want %+v", got, tc.want)
			}
			if tr.Next() != tc.next {
				t.Errorf("next = %d, want %d", tr.Next(), tc.next)
			}
		})
	}
}

func TestTrackerObservations(t *testing.T) {
	tr := window()
	want := []Observation{
		{Kind: InOrder},
		{Kind: InOrder, Gap: 2},
		{Kind: Late, Offset: 2, Filled: true},
		{Kind: Duplicate},
		{Kind: Rejected},
	}
	for i, s := range []uint64{0, 3, 1, 1, 3 + MaxJump + 2} {
		if got := tr.Observe(s); got != want[i] {
			t.Errorf("Observe(%d) = %+v, want %+v", s, got, want[i])
		}
	}
}

// The zero Tracker, as stream uses it: like iperf3, a duplicate counts as
// received and out of order, and any jump is taken.
func TestTrackerIperf(t *testing.T) {
	tests := []struct {
		name                      string
		seqs                      []uint64
		sent                      uint64 // for Finish; 0: not called
		received, lost, ooo, want uint64
	}{
		{name: "in order", seqs: []uint64{0, 1, 2, 3}, received: 4, want: 4},
		{name: "gap and late", seqs: []uint64{0, 1, 2, 4, 3, 7}, received: 6, lost: 2, ooo: 1, want: 8},
		{name: "first lost", seqs: []uint64{1, 2}, received: 2, lost: 1, want: 3},
		{name: "swap", seqs: []uint64{1, 0, 3, 2}, received: 4, lost: 0, ooo: 2, want: 4},
		{name: "tail lost", seqs: []uint64{0, 1}, sent: 5, received: 2, lost: 3, want: 5},
		{name: "all lost", sent: 4, lost: 4, want: 4},
		{name: "big gap, late fill", seqs: []uint64{0, 10, 5}, received: 3, lost: 8, ooo: 1, want: 11},
		{name: "duplicate does not go negative", seqs: []uint64{0, 0, 0}, received: 3, ooo: 2, want: 1},
		{name: "finish below highest", seqs: []uint64{0, 1, 2}, sent: 2, received: 3, want: 3},
		// Beyond what stream tested: a duplicate takes a loss back, and a
		// huge jump is counted, as stream's own tracker did.
		{name: "duplicate fills a gap", seqs: []uint64{0, 2, 2}, received: 3, lost: 0, ooo: 1, want: 3},
		{name: "duplicate before a gap", seqs: []uint64{0, 0, 2}, received: 3, lost: 1, ooo: 1, want: 3},
		{name: "huge jump", seqs: []uint64{0, 1 << 40, 1}, received: 3, lost: 1<<40 - 2, ooo: 1, want: 1<<40 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Tracker
			for _, q := range tt.seqs {
				s.Observe(q)
			}
			if tt.sent > 0 {
				s.Finish(tt.sent)
			}
			c := s.Counts()
			if uint64(c.Received) != tt.received || uint64(c.Lost) != tt.lost || uint64(c.OutOfOrder) != tt.ooo || s.Next() != tt.want {
				t.Errorf("received %d lost %d ooo %d expected %d; want %d %d %d %d",
					c.Received, c.Lost, c.OutOfOrder, s.Next(), tt.received, tt.lost, tt.ooo, tt.want)
			}
			if c.Duplicates != 0 {
				t.Errorf("%d duplicates without a window", c.Duplicates)
			}
		})
	}
}

func TestTrackerFinishWithWindow(t *testing.T) {
	tr := window()
	for _, s := range []uint64{0, 2} {
		tr.Observe(s)
	}
	tr.Finish(6)
	if c := tr.Counts(); c.Lost != 4 || tr.Next() != 6 {
		t.Errorf("lost %d next %d, want 4 and 6", c.Lost, tr.Next())
	}
}

// TestFinishImplausible: with a MaxJump, a sent count too far ahead (a
// client's forged number) is ignored rather than counted as lost.
func TestFinishImplausible(t *testing.T) {
	tr := Tracker{MaxJump: MaxJump}
	tr.Observe(0)
	tr.Finish(1 << 63)
	if c := tr.Counts(); c.Lost != 0 || tr.Next() != 1 {
		t.Fatalf("after Finish(2^63): lost %d, next %d", c.Lost, tr.Next())
	}
	tr.Finish(10)
	if c := tr.Counts(); c.Lost != 9 {
		t.Fatalf("after Finish(10): lost %d, want 9", c.Lost)
	}
}
