package metrics_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"tdsc/internal/metrics"
	"tdsc/internal/testenv/cubetest"
)

func TestEvaluateStopsWhenCancelled(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	ref, x := cubetest.Uniform(rng, 16, 16, 4, 0, 255), cubetest.Uniform(rng, 16, 16, 4, 0, 255)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if r, err := metrics.Evaluate(ctx, ref, x); !errors.Is(err, context.Canceled) || r != nil {
		t.Errorf("Evaluate with a cancelled context: report %v, error %v; want context.Canceled", r, err)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	rng := rand.New(rand.NewPCG(13, 14))
	ref := cubetest.Uniform(rng, 512, 512, 31, 0, 255)
	x := cubetest.Uniform(rng, 512, 512, 31, 0, 255)
	for b.Loop() {
		if _, err := metrics.Evaluate(b.Context(), ref, x); err != nil {
			b.Fatal(err)
		}
	}
}
