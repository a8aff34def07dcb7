package delayline

// queue holds frames in arrival order until they are due, in a byte ring
// of fixed size: no allocation per frame, and its size is the bound the
// line promises (the bandwidth-delay product). Each frame is stored in one
// piece; one that does not fit before the ring's end starts again at 0,
// leaving the end unused until the reader passes it. Not safe for
// concurrent use: each direction owns its queue.
type queue struct {
	buf []byte
	w   int // where the next frame goes
	// held are the stored frames, oldest first, in a ring of metadata.
	held       []slot
	first, n   int
	bytes      int   // frame bytes held (what the peak reports)
	lastDue    int64 // due time of the newest frame: frames leave in order
	peak       int
	maxPackets int
}

type slot struct {
	off, len int
	due      int64
}

// newQueue returns a queue of size bytes that holds at most maxPackets
// frames.
func newQueue(size, maxPackets int) *queue {
	return &queue{buf: make([]byte, size), held: make([]slot, maxPackets), maxPackets: maxPackets}
}

// push stores a copy of frame, due at due (or at the previous frame's due
// time if later: the line keeps order, as a path between zones does). It
// reports false, storing nothing, when the queue has no room.
func (q *queue) push(frame []byte, due int64) bool {
	size := len(frame)
	if size == 0 || size > len(q.buf) || q.n == q.maxPackets {
		return false
	}
	off := -1
	switch {
	case q.n == 0:
		off = 0
	case q.w > q.held[q.first].off: // data in [r, w): room at the end, or from 0 to r
		r := q.held[q.first].off
		if q.w+size <= len(q.buf) {
			off = q.w
		} else if size <= r {
			off = 0
		}
	default: // wrapped: data in [r, end) and [0, w); room between w and r
		if q.w+size <= q.held[q.first].off {
			off = q.w
		}
	}
	if off < 0 {
		return false
	}
	copy(q.buf[off:], frame)
	due = max(due, q.lastDue)
	q.lastDue = due
	q.held[(q.first+q.n)%len(q.held)] = slot{off: off, len: size, due: due}
	q.n++
	q.w = off + size
	q.bytes += size
	q.peak = max(q.peak, q.bytes)
	return true
}

// head returns the oldest frame and its due time; ok is false when empty.
// The frame is valid until the next pop.
func (q *queue) head() (frame []byte, due int64, ok bool) {
	if q.n == 0 {
		return nil, 0, false
	}
	s := q.held[q.first]
	return q.buf[s.off : s.off+s.len], s.due, true
}

// at returns the i-th oldest frame (i < len), for sending a batch before
// popping it.
func (q *queue) at(i int) (frame []byte, due int64) {
	s := q.held[(q.first+i)%len(q.held)]
	return q.buf[s.off : s.off+s.len], s.due
}

// pop removes the oldest frame.
func (q *queue) pop() {
	if q.n == 0 {
		return
	}
	q.bytes -= q.held[q.first].len
	q.first = (q.first + 1) % len(q.held)
	q.n--
	if q.n == 0 {
		q.first, q.w = 0, 0
	}
}

func (q *queue) len() int { return q.n }
