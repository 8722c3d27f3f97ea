package parallel

import (
	"context"
	"errors"
	"testing"
)

// TestInterruptible checks that Interruptible returns work's result when
// it ends first, ctx.Err() at once when ctx is cancelled first (the work
// still blocked), and never starts work under a context already done.
func TestInterruptible(t *testing.T) {
	v, err := Interruptible(context.Background(), func() (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Errorf("finished work: %v, %v", v, err)
	}
	//lint:ignore SA1012 a nil ctx is documented as never cancelled
	if v, err := Interruptible(nil, func() (int, error) { return 8, nil }); v != 8 || err != nil {
		t.Errorf("nil context: %v, %v", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	started := make(chan struct{})
	go func() {
		<-started
		cancel()
	}()
	v, err = Interruptible(ctx, func() (int, error) {
		close(started)
		<-release // blocked until the test ends: abandoned
		return 9, nil
	})
	close(release)
	if v != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled work: %v, %v", v, err)
	}
	ran := false
	if _, err := Interruptible(ctx, func() (int, error) { ran = true; return 0, nil }); ran || !errors.Is(err, context.Canceled) {
		t.Errorf("done context: ran %v, %v", ran, err)
	}
}
