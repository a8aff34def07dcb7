package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	boom := errors.New("boom")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		after int // done reports true on this call (0: never)
		fail  int // done fails on this call (0: never)
		want  error
		calls int
	}{
		{"at once", context.Background(), 1, 0, nil, 1},
		{"on the third call", context.Background(), 3, 0, nil, 3},
		{"never", context.Background(), 0, 0, ErrTimeout, -1},
		{"fails", context.Background(), 0, 2, boom, 2},
		{"cancelled, still asked once", cancelled, 0, 0, context.Canceled, 1},
		{"cancelled but done at once", cancelled, 1, 0, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := Until(tc.ctx, 50*time.Millisecond, time.Millisecond, func() (bool, error) {
				calls++
				if calls == tc.fail {
					return false, boom
				}
				return calls == tc.after, nil
			})
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if tc.calls >= 0 && calls != tc.calls {
				t.Errorf("%d calls, want %d", calls, tc.calls)
			}
			if tc.calls < 0 && calls < 2 {
				t.Errorf("only %d calls before timing out", calls)
			}
		})
	}
}
