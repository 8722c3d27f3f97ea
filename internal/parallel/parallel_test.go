package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestForVisitsEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 50} {
		for _, n := range []int{0, 1, 7, 100} {
			counts := make([]atomic.Int32, n)
			busy := make([]atomic.Bool, Workers(workers))
			err := For(context.Background(), n, workers, func(w, i int) error {
				if w < 0 || w >= len(busy) {
					t.Errorf("worker index %d out of range", w)
					return nil
				}
				if busy[w].Swap(true) {
					t.Errorf("worker %d used by two calls at once", w)
				}
				counts[i].Add(1)
				busy[w].Store(false)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range counts {
				if c := counts[i].Load(); c != 1 {
					t.Fatalf("workers %d, n %d: index %d visited %d times", workers, n, i, c)
				}
			}
		}
	}
}

func TestForStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int32
	err := For(context.Background(), 1000, 1, func(_, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
	if c := calls.Load(); c != 4 {
		t.Errorf("%d calls with one worker, want 4 (none after the error)", c)
	}
}

func TestForCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	err := For(ctx, 10, 2, func(_, _ int) error { calls.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Errorf("cancelled For: error %v after %d calls", err, calls.Load())
	}
}

// TestEach checks that every index is visited exactly once.
func TestEach(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		counts := make([]atomic.Int32, n)
		Each(n, func(i int) { counts[i].Add(1) })
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Fatalf("n %d: index %d visited %d times", n, i, c)
			}
		}
	}
}
