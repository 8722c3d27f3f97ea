package nonlocal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/denoise"
	"tdsc/internal/methods/twodsc"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
	"tdsc/internal/stages/blockmatch"
	"tdsc/internal/stages/groupwiener"
	"tdsc/internal/testenv/cubetest"
)

// TestCollaborateIdentity: groups whose estimate is their own noisy patches
// average back to the cube exactly, whatever the weights, and voxels are
// combined in an order that does not depend on the number of workers.
func TestCollaborateIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range []struct {
		h, w, b int
		o       blockmatch.Options
	}{
		{37, 29, 3, blockmatch.Options{Patch: 4, Step: 3, Window: 7, K: 8}},
		{50, 20, 2, blockmatch.Options{Patch: 3, Step: 2, Window: 5, K: 4}},
		{12, 12, 1, blockmatch.Options{Patch: 5, Step: 5, Window: 31, K: 16}},
	} {
		c := cubetest.Uniform(rng, sh.h, sh.w, sh.b, 0, 255)
		m, err := blockmatch.New(sh.h, sh.w, sh.o)
		if err != nil {
			t.Fatal(err)
		}
		ci := interleave(c)
		for _, layout := range []patchLayout{bandMajor, pixelMajor} {
			identity := func() groupEstimator {
				return func(pos []int32, est []float64) float64 {
					ci.gather(est, pos, sh.o.Patch, layout)
					return 1 + float64(pos[0]%7) // any positive weight
				}
			}
			fallback := msi.NewCube(sh.h, sh.w, sh.b)
			var outs []*msi.Cube
			for _, threads := range []int{1, 3} {
				out, err := collaborate(context.Background(), m, sh.o, c, sh.b, layout, interleave(fallback).at, threads, identity, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range out.Data {
					if math.Abs(v-c.Data[i]) > 1e-9*(1+math.Abs(c.Data[i])) {
						t.Fatalf("%+v layout %d: voxel %d is %v, want %v", sh, layout, i, v, c.Data[i])
					}
				}
				outs = append(outs, out)
			}
			if !slices.Equal(outs[0].Data, outs[1].Data) {
				t.Errorf("%+v layout %d: 1 and 3 workers differ", sh, layout)
			}
		}
	}
}

// TestSpectral: spectralInterleaved applies the matrix to every pixel's
// spectrum (against a direct sum, on a cube whose pixels span several of
// its blocks), and spectralInverse undoes it for the orthonormal DCT.
func TestSpectral(t *testing.T) {
	const h, w, b = 50, 47, 5
	c := cubetest.Uniform(rand.New(rand.NewPCG(9, 10)), h, w, b, 0, 255)
	dct := groupwiener.DCTMatrix(b)
	pc := spectralInterleaved(c, dct)
	for y := range h {
		for x := range w {
			for k := range b {
				want := 0.0
				for j := range b {
					want += dct[k*b+j] * c.At(y, x, j)
				}
				if got := pc.data[(y*w+x)*b+k]; math.Abs(got-want) > 1e-12 {
					t.Fatalf("pixel (%d, %d) coefficient %d = %v, want %v", y, x, k, got, want)
				}
			}
		}
	}
	back := msi.NewCube(h, w, b)
	for i := range h * w {
		for k := range b {
			back.Data[k*h*w+i] = pc.data[i*b+k]
		}
	}
	back = spectralInverse(back, dct)
	for i, v := range back.Data {
		if math.Abs(v-c.Data[i]) > 1e-12 {
			t.Fatalf("voxel %d: %v after the inverse, want %v", i, v, c.Data[i])
		}
	}
}

// TestInterleave: every voxel of a cube whose pixels span several of
// interleave's blocks is where pixelCube says.
func TestInterleave(t *testing.T) {
	const h, w, b = 50, 47, 3
	c := cubetest.Uniform(rand.New(rand.NewPCG(11, 12)), h, w, b, 0, 255)
	pc := interleave(c)
	for k := range b {
		for i, v := range c.Band(k) {
			if got := pc.at(i, k); got != v {
				t.Fatalf("pixel %d band %d = %v, want %v", i, k, got, v)
			}
		}
	}
}

// TestGatherLayouts: the two layouts hold the same values of a group,
// element (j, b, dy, dx) of one at the place of the other.
func TestGatherLayouts(t *testing.T) {
	const h, w, c, p = 9, 11, 3, 4
	cube := cubetest.Uniform(rand.New(rand.NewPCG(7, 8)), h, w, c, 0, 255)
	group := []int32{0, 5*w + 7, 2*w + 3}
	bm := make([]float64, len(group)*c*p*p)
	pm := make([]float64, len(bm))
	ci := interleave(cube)
	ci.gather(bm, group, p, bandMajor)
	ci.gather(pm, group, p, pixelMajor)
	for j, at := range group {
		y, x := int(at)/w, int(at)%w
		for b := range c {
			for dy := range p {
				for dx := range p {
					want := cube.At(y+dy, x+dx, b)
					if got := bm[((j*c+b)*p+dy)*p+dx]; got != want {
						t.Fatalf("bandMajor (%d,%d,%d,%d) = %v, want %v", j, b, dy, dx, got, want)
					}
					if got := pm[((j*p+dy)*p+dx)*c+b]; got != want {
						t.Fatalf("pixelMajor (%d,%d,%d,%d) = %v, want %v", j, b, dy, dx, got, want)
					}
				}
			}
		}
	}
}

// TestCollaborateFallback: voxels that no group reaches keep the fallback.
func TestCollaborateFallback(t *testing.T) {
	c := cubetest.Uniform(rand.New(rand.NewPCG(3, 4)), 10, 10, 2, 0, 255)
	fallback := cubetest.Uniform(rand.New(rand.NewPCG(5, 6)), 10, 10, 2, 0, 255)
	m, _ := blockmatch.New(10, 10, blockmatch.Options{Patch: 2, Step: 2, Window: 3, K: 1})
	zero := func() groupEstimator {
		return func(pos []int32, est []float64) float64 { interleave(c).gather(est, pos, 2, bandMajor); return 0 }
	}
	out, err := collaborate(context.Background(), m, blockmatch.Options{Patch: 2, Step: 2, Window: 3, K: 1}, c, 2, bandMajor, interleave(fallback).at, 2, zero, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Data, fallback.Data) {
		t.Error("with zero weights the output is not the fallback")
	}
}

// smoothCube is a small cube of a few spectra in smooth spatial patterns: a
// scene that nonlocal low-rank methods are made for.
func smoothCube(h, w, b int) *msi.Cube {
	c := msi.NewCube(h, w, b)
	for y := range h {
		for x := range w {
			a := 0.5 + 0.5*math.Sin(float64(x)/5)
			bb := 0.5 + 0.5*math.Cos(float64(y)/7)
			for k := range b {
				s1 := 60 + 100*float64(k)/float64(b)
				s2 := 200 - 150*float64(k)/float64(b)
				c.Set(y, x, k, a*s1+bb*s2*0.5+float64((x/12+y/12)%2)*20)
			}
		}
	}
	return c
}

func TestDenoiseImprovesAndIsDeterministic(t *testing.T) {
	clean := smoothCube(48, 40, 12)
	noisy := noise.Add(nil, clean, 20, 1)
	var outs []*msi.Cube
	for _, threads := range []int{1, 2} {
		d := &Denoiser{Options: Options{Threads: threads, Pilot: pilotForTests()}}
		out, _, err := d.Denoise(context.Background(), noisy, 20)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	if !slices.Equal(outs[0].Data, outs[1].Data) {
		t.Error("1 and 2 threads give different outputs")
	}
	before, _ := metrics.Evaluate(t.Context(), clean, noisy)
	after, _ := metrics.Evaluate(t.Context(), clean, outs[0])
	t.Logf("PSNR %.2f → %.2f dB", before.PSNR, after.PSNR)
	if after.PSNR < before.PSNR+10 {
		t.Errorf("PSNR %.2f dB is not 10 dB above the noisy %.2f", after.PSNR, before.PSNR)
	}
}

func TestDenoiseCancelledAndOptions(t *testing.T) {
	noisy := noise.Add(nil, smoothCube(24, 24, 6), 10, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &Denoiser{Options: Options{Pilot: pilotForTests()}}
	if _, _, err := d.Denoise(ctx, noisy, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Denoise returned %v", err)
	}
	for _, tc := range []struct {
		o     Options
		field string
	}{
		{Options{Rounds: -1}, "rounds"},
		{Options{Rank: -2}, "rank"},
		{Options{Rank: 7}, "rank"}, // more than the 6 bands
		{Options{Group: 1}, "group"},
		{Options{Wiener: -5}, "wiener"},
		{Options{Pilot: twodsc.Options{Stride: 6}}, "stride"},
	} {
		d := &Denoiser{Options: tc.o}
		var oe *option.Error
		if _, _, err := d.Denoise(context.Background(), noisy, 10); !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("options %+v: got %v, want an error for %q", tc.o, err, tc.field)
		}
		if err := d.Check(10, noisy.Height, noisy.Width, noisy.Bands); !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("options %+v: Check gave %v, want an error for %q", tc.o, err, tc.field)
		}
	}
}

// TestChooseRank: with the clean cube as the estimate, the rank is the
// number of directions whose signal power is clearly above the threshold
// 3σ²√(2/N) when that exceeds RankFor(σ), and RankFor(σ) otherwise. A
// direction at twice the threshold counts; one at a third of it does not.
func TestChooseRank(t *testing.T) {
	for _, tc := range rankCases {
		clean, noisy := cubeWithPowers(tc.powers, tc.sigma, 1)
		got, err := ChooseRank(noisy, clean, tc.sigma)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("powers %v×threshold, σ %v: rank %d, want %d", tc.powers, tc.sigma, got, tc.want)
		}
	}
}

// rankCases are signal powers along orthonormal directions, in units of
// ChooseRank's threshold on a cube of rankHeight×rankWidth pixels, and the
// rank ChooseRank chooses for them with the clean cube as its estimate.
var rankCases = []struct {
	powers []float64 // descending
	sigma  float64
	want   int
}{
	{strongPowers(9), 30, 9},
	{append(strongPowers(8), 2), 30, 9},
	{append(strongPowers(8), 1.0/3), 30, 8},
	{append(strongPowers(9), 1.0/3, 1.0/3), 30, 9},
	{strongPowers(3), 30, RankFor(30)},
	{strongPowers(3), 10, RankFor(10)},
	{append(strongPowers(13), 2), 10, 14},
	// More directions of signal than chooseRank first measures.
	{append(strongPowers(17), 1.0/3), 30, 17},
	{strongPowers(rankBands), 30, rankBands},
}

const rankHeight, rankWidth, rankBands = 64, 64, 20

// strongPowers returns n powers of 20 thresholds.
func strongPowers(n int) []float64 { return slices.Repeat([]float64{20}, n) }

// cubeWithPowers returns a clean cube of rankHeight×rankWidth×rankBands
// whose spectra have the given powers (in units of ChooseRank's threshold
// for noise σ) along random orthonormal directions, the coefficients
// independent from one block of block×block pixels to the next and the
// same within a block (block divides rankHeight and rankWidth), and the
// cube with noise σ added.
func cubeWithPowers(powers []float64, sigma float64, block int) (clean, noisy *msi.Cube) {
	const h, w, bands = rankHeight, rankWidth, rankBands
	threshold := 3 * sigma * sigma * math.Sqrt(2.0/(h*w))
	rng := rand.New(rand.NewPCG(uint64(len(powers)), 5))
	// Orthonormal directions: the first columns of the Q of a random
	// matrix.
	q := cubetest.Orthonormal(rng, bands, len(powers))
	clean = msi.NewCube(h, w, bands)
	coef := make([]float64, (h/block)*(w/block)*len(powers))
	for i := range coef {
		coef[i] = rng.NormFloat64() * math.Sqrt(powers[i%len(powers)]*threshold)
	}
	for p := range h * w {
		blk := (p/w/block)*(w/block) + p%w/block
		for j := range powers {
			c := coef[blk*len(powers)+j]
			for b := range bands {
				clean.Data[b*h*w+p] += c * q.At(b, j)
			}
		}
	}
	return clean, noise.Add(nil, clean, sigma, 1)
}

// TestDraft checks the draft's settings: one Wiener pass (none stays
// none), one low-rank round, everything else the method's.
func TestDraft(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want Options
	}{
		{"defaults", Options{}, Options{Wiener: 1, Rounds: 1}},
		{"given step", Options{Pilot: twodsc.Options{Stride: 1}}, Options{Wiener: 1, Rounds: 1, Pilot: twodsc.Options{Stride: 1}}},
		{"no Wiener, other settings kept", Options{Wiener: -1, Rounds: 3, Rank: 5, Group: 64, Threads: 2, Pilot: twodsc.Options{Beta: 7}},
			Options{Wiener: -1, Rounds: 1, Rank: 5, Group: 64, Threads: 2, Pilot: twodsc.Options{Beta: 7}}},
	} {
		d := &Denoiser{Options: tc.in}
		got, ok := d.Draft().(*Denoiser)
		if !ok {
			t.Fatalf("%s: Draft returned %T, want *Denoiser", tc.name, d.Draft())
		}
		if !reflect.DeepEqual(got.Options, tc.want) {
			t.Errorf("%s: draft options %+v, want %+v", tc.name, got.Options, tc.want)
		}
		if !reflect.DeepEqual(d.Options, tc.in) {
			t.Errorf("%s: Draft changed the method's options to %+v", tc.name, d.Options)
		}
	}
}

// TestSubspaceWiener checks the subspace Wiener pass against what it must
// be: its output lies in the pilot's k-dimensional spectral subspace about
// the noisy mean (nothing outside it is kept), and on a cube that lies in
// such a subspace, with a clean pilot and faint noise, it returns the
// clean cube.
func TestSubspaceWiener(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	const h, w, b, k = 40, 36, 12, 4
	clean := msi.NewCube(h, w, b)
	spectra := make([][]float64, k)
	for j := range spectra {
		spectra[j] = make([]float64, b)
		for i := range spectra[j] {
			spectra[j][i] = rng.Float64()
		}
	}
	for y := range h {
		for x := range w {
			for j := range k {
				a := 40 * (1 + math.Sin(float64(x*(j+1))/9+float64(y)/(7+float64(j))))
				for i := range b {
					clean.Data[(i*h+y)*w+x] += a * spectra[j][i]
				}
			}
		}
	}
	shape := blockmatch.Options{Patch: 6, Step: 6, Window: 15, K: 16}
	noisy := noise.Add(nil, clean, 0.01, 1)
	out, err := subspaceWienerStage(t.Context(), noisy, clean, 0.01, k, shape, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := cubetest.RMSE(out, clean); e > 0.02 {
		t.Errorf("faint noise on a rank-%d cube: RMSE %.4f against the clean cube", k, e)
	}
	noisy = noise.Add(nil, clean, 20, 2)
	out, err = subspaceWienerStage(t.Context(), noisy, clean, 20, 2, shape, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The residual of out about the noisy mean, regressed on the pilot's
	// two leading directions, leaves nothing.
	mean := make([]float64, b)
	for i := range b {
		for _, v := range noisy.Band(i) {
			mean[i] += v / float64(h*w)
		}
	}
	centred := mat.NewDense(h*w, b, nil)
	pc := mat.NewDense(h*w, b, nil)
	for i := range b {
		for p := range h * w {
			centred.Set(p, i, out.Band(i)[p]-mean[i])
			pc.Set(p, i, clean.Band(i)[p]-mean[i])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(pc, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var v mat.Dense
	svd.VTo(&v)
	e := v.Slice(0, b, 0, 2)
	var proj, back mat.Dense
	proj.Mul(centred, e)
	back.Mul(&proj, e.T())
	back.Sub(centred, &back)
	if r := mat.Norm(&back, 2) / mat.Norm(centred, 2); r > 1e-9 {
		t.Errorf("the output holds %.3g of its norm outside the 2-dimensional subspace", r)
	}
}

func TestWienerSubspace(t *testing.T) {
	for _, tc := range [][2]int{{31, 16}, {224, 112}, {10, 10}, {16, 16}, {40, 20}, {33, 17}} {
		if got := WienerSubspace(tc[0]); got != tc[1] {
			t.Errorf("WienerSubspace(%d) = %d, want %d", tc[0], got, tc[1])
		}
	}
}

// TestWithSignalDirections: a count of signal directions given by the
// caller sets the rank as ChooseRank's own count would, the larger of it
// and RankFor(σ), at most the bands, and the run is the one with that rank
// given, bit for bit; a given rank is kept, and the draft keeps the count.
func TestWithSignalDirections(t *testing.T) {
	const sigma = 20 // RankFor: 6
	noisy := noise.Add(nil, smoothCube(24, 24, 12), sigma, 1)
	run := func(m denoise.Method) (*msi.Cube, string) {
		out, res, err := m.Denoise(context.Background(), noisy, sigma)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Settings {
			if p.Name == "rank" {
				return out, p.Value
			}
		}
		t.Fatal("no rank in the result's settings")
		return nil, ""
	}
	base := Options{Rounds: 1, Pilot: pilotForTests()}
	for _, tc := range []struct{ given, counted, want int }{
		{0, 8, 8}, {0, 2, RankFor(sigma)}, {0, 0, RankFor(sigma)}, {0, 40, 12}, {5, 8, 5},
	} {
		o := base
		o.Rank = tc.given
		m := (&Denoiser{Options: o}).WithSignalDirections(tc.counted)
		got, rank := run(m)
		o.Rank = tc.want
		want, _ := run(&Denoiser{Options: o})
		if rank != fmt.Sprint(tc.want) || !slices.Equal(got.Data, want.Data) {
			t.Errorf("rank %d given, %d directions counted: rank %s, want %d (same output: %v)",
				tc.given, tc.counted, rank, tc.want, slices.Equal(got.Data, want.Data))
		}
		draft, ok := m.(denoise.Drafter)
		if !ok {
			t.Fatalf("%T is not a Drafter", m)
		}
		if _, rank := run(draft.Draft()); rank != fmt.Sprint(tc.want) {
			t.Errorf("rank %d given, %d directions counted: the draft's rank %s, want %d", tc.given, tc.counted, rank, tc.want)
		}
	}
}
