package metrics_test

import (
	"context"
	"errors"
	"math"
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

// TestCoverageCountsScoredVoxels: on random cubes with voxels missing at
// random in the reference, the input or both, the report's coverage is
// what counting voxel by voxel gives, and Unscored names exactly the bands
// in which the reference has data and the input none.
func TestCoverageCountsScoredVoxels(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const h, w, bands = 16, 18, 5
	for trial := range 20 {
		ref, x := cubetest.Uniform(rng, h, w, bands, 0, 255), cubetest.Uniform(rng, h, w, bands, 0, 255)
		for i := range ref.Data {
			if rng.Float64() < 0.2 {
				ref.Data[i] = math.NaN()
			}
			if rng.Float64() < 0.3 {
				x.Data[i] = math.NaN()
			}
		}
		for i := range x.Band(1) { // the input lacks a band the reference has
			x.Band(1)[i] = math.NaN()
		}
		for i := range ref.Band(3) { // the reference lacks one: nothing to score there
			ref.Band(3)[i] = math.NaN()
		}
		r, err := metrics.Evaluate(t.Context(), ref, x)
		if err != nil {
			t.Fatal(err)
		}
		scored, withData := 0, 0
		for b := range bands {
			s, d := 0, 0
			for i, v := range ref.Band(b) {
				if !math.IsNaN(v) {
					d++
					if !math.IsNaN(x.Band(b)[i]) {
						s++
					}
				}
			}
			if r.BandScored[b] != s || r.BandWithData[b] != d {
				t.Fatalf("trial %d band %d: %d of %d scored, want %d of %d", trial, b, r.BandScored[b], r.BandWithData[b], s, d)
			}
			scored += s
			withData += d
		}
		if r.Scored != scored || r.WithData != withData || r.Missing() != withData-scored {
			t.Fatalf("trial %d: %d of %d scored (%d missing), want %d of %d", trial, r.Scored, r.WithData, r.Missing(), scored, withData)
		}
		if got := r.Coverage(); math.Abs(got-float64(scored)/float64(withData)) > 1e-15 {
			t.Fatalf("trial %d: coverage %v", trial, got)
		}
		if got := r.Unscored(); len(got) != 1 || got[0] != 1 {
			t.Fatalf("trial %d: unscored bands %v, want [1]", trial, got)
		}
	}
	// A complete input covers the whole reference.
	ref := cubetest.Uniform(rng, h, w, bands, 0, 255)
	r, err := metrics.Evaluate(t.Context(), ref, ref.Clone())
	if err != nil {
		t.Fatal(err)
	}
	if r.Coverage() != 1 || r.Missing() != 0 || r.Unscored() != nil || r.WithData != h*w*bands {
		t.Errorf("complete input: coverage %v, missing %d, unscored %v, %d with data", r.Coverage(), r.Missing(), r.Unscored(), r.WithData)
	}
}
