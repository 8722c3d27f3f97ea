package parallel

import "context"

// Interruptible returns work's result, or ctx.Err() as soon as ctx is
// cancelled, whichever comes first. It is how the command line stops
// within moments of SIGINT or SIGTERM in work that checks no context of
// its own: reading a whole cube (every format decodes it in one piece),
// simulating noise on it, computing statistics over it.
//
// work must have no effect beyond its result (it reads files and fills
// memory of its own, never writes a file): abandoned, it runs on until
// the process exits, which Main does as soon as the command returns the
// context's error. A nil ctx is never cancelled.
func Interruptible[T any](ctx context.Context, work func() (T, error)) (T, error) {
	if ctx == nil {
		return work()
	}
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	type outcome struct {
		value T
		err   error
	}
	done := make(chan outcome, 1) // buffered: an abandoned work does not block
	go func() {
		v, err := work()
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		return o.value, o.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
