package delayline

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

func frameOf(n int, tag byte) []byte { return bytes.Repeat([]byte{tag}, n) }

func TestQueueKeepsOrderAndBound(t *testing.T) {
	q := newQueue(100, 10)
	for i, n := range []int{40, 40} {
		if !q.push(frameOf(n, byte(i)), int64(i)) {
			t.Fatalf("frame %d refused with room left", i)
		}
	}
	if q.push(frameOf(30, 9), 5) {
		t.Fatal("a frame past the queue's 100 bytes was taken")
	}
	if q.peak != 80 || q.bytes != 80 {
		t.Errorf("peak %d, held %d; want 80, 80", q.peak, q.bytes)
	}
	// Freeing the first 40 bytes makes room at the ring's start: the
	// 30-byte frame wraps, since 20 bytes are left at the end.
	q.pop()
	if !q.push(frameOf(30, 2), 2) {
		t.Fatal("a frame that fits at the ring's start was refused")
	}
	if !q.push(frameOf(10, 3), 3) {
		t.Fatal("a frame that fits between the wrapped frame and the oldest was refused")
	}
	if q.push(frameOf(1, 4), 4) {
		t.Fatal("a frame that would overwrite the oldest was taken")
	}
	for want := byte(1); want <= 3; want++ {
		f, due, ok := q.head()
		if !ok || f[0] != want || due != int64(want) {
			t.Fatalf("head = %v (due %d), %v; want frame %d", f[:1], due, ok, want)
		}
		for _, b := range f {
			if b != want {
				t.Fatalf("frame %d overwritten: %v", want, f)
			}
		}
		q.pop()
	}
	if _, _, ok := q.head(); ok || q.bytes != 0 {
		t.Errorf("queue not empty after popping all: %d bytes", q.bytes)
	}
}

func TestQueueFrameCap(t *testing.T) {
	q := newQueue(1000, 2)
	q.push(frameOf(1, 1), 0)
	q.push(frameOf(1, 2), 0)
	if q.push(frameOf(1, 3), 0) {
		t.Error("a third frame taken by a queue of two slots")
	}
	if q.push(nil, 0) || q.push(frameOf(1001, 1), 0) {
		t.Error("an empty or oversized frame taken")
	}
}

// TestQueueDueInOrder: with jitter a later frame may draw an earlier due
// time; it leaves after the one before it, never ahead.
func TestQueueDueInOrder(t *testing.T) {
	q := newQueue(1000, 10)
	q.push(frameOf(1, 1), 50)
	q.push(frameOf(1, 2), 20)
	q.pop()
	if _, due, _ := q.head(); due != 50 {
		t.Errorf("second frame due %d, want 50 (the first's)", due)
	}
}

// TestQueueRandom pushes and pops at random against a plain slice and
// checks that contents, order and byte count agree, and that the queue
// refuses a frame only when its bytes could not hold it in one piece.
func TestQueueRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const size = 4096
	q := newQueue(size, 64)
	type want struct {
		data []byte
	}
	var model []want
	held := 0
	tag := byte(0)
	for range 100000 {
		if rng.IntN(2) == 0 {
			tag++
			f := frameOf(1+rng.IntN(900), tag)
			ok := q.push(f, 0)
			if ok {
				model = append(model, want{f})
				held += len(f)
			} else if held+len(f) <= size/2 && len(model) < 64 {
				// Half the ring is always usable: the waste at the end
				// is less than the frame that did not fit there.
				t.Fatalf("refused %d bytes with %d of %d held", len(f), held, size)
			}
		} else if len(model) > 0 {
			f, _, ok := q.head()
			if !ok || !bytes.Equal(f, model[0].data) {
				t.Fatal("head differs from the oldest frame pushed")
			}
			q.pop()
			held -= len(model[0].data)
			model = model[1:]
		}
		if q.bytes != held || q.len() != len(model) {
			t.Fatalf("queue holds %d bytes in %d frames, want %d in %d", q.bytes, q.len(), held, len(model))
		}
	}
}

func TestLateHist(t *testing.T) {
	var h lateHist
	if h.quantile(0.5) != 0 {
		t.Error("empty histogram: quantile not 0")
	}
	for i := range 99 {
		h.add(int64(10*time.Microsecond) + int64(i))
	}
	h.add(int64(3 * time.Millisecond))
	med, p99 := h.quantile(0.5), h.quantile(0.99)
	if med < 10*time.Microsecond || med > 12*time.Microsecond {
		t.Errorf("median %s, want about 10µs (within a bucket)", med)
	}
	if p99 > 12*time.Microsecond {
		t.Errorf("p99 %s: the 99th of 100 values is still about 10µs", p99)
	}
	if h.quantile(1) != 3*time.Millisecond || h.max != int64(3*time.Millisecond) {
		t.Errorf("max %s, want 3ms", h.quantile(1))
	}
	for _, v := range []int64{0, 1, 3, 4, 5, 7, 8, 100, 1 << 40, 1<<62 + 12345} {
		if top := bucketTop(bucket(v)); top < v || (v >= 8 && float64(top) > float64(v)*1.26) {
			t.Errorf("value %d: bucket %d tops at %d", v, bucket(v), top)
		}
	}
}
