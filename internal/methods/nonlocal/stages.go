package nonlocal

import (
	"context"
	"fmt"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/stages/blockmatch"
	"tdsc/internal/stages/groupwiener"
	"tdsc/internal/stages/subspace"
	"tdsc/internal/stages/wnnm"
)

// lowRankStage is the spectral-subspace, nonlocal low-rank estimate: with
// μ the noisy cube's mean spectrum (unbiased, where the 2DSC pilot's band
// means are off by several units), the basis E of the pilot's top-k
// spectral directions about μ, the eigen-images Z = (Y − μ)E of the noisy
// cube (noise stays white with the same σ) and Zp of the pilot, groups of
// K similar p×p×k patches of Z matched on Zp's leading eigen-images
// (leading), each group shrunk by the weighted nuclear norm (package wnnm),
// the groups averaged back with equal weights, and ZEᵀ + μ.
func lowRankStage(ctx context.Context, y, pilot *msi.Cube, sigma float64, k int, o blockmatch.Options, c float64, threads int, progress func(int)) (*msi.Cube, error) {
	basis, err := subspace.Fit(pilot, subspace.MeanSpectrum(y), min(k, y.Bands))
	if err != nil {
		return nil, err
	}
	zp := basis.Project(pilot)
	m, err := blockmatch.New(y.Height, y.Width, o)
	if err != nil {
		return nil, fmt.Errorf("nonlocal: %w", err)
	}
	n, d := m.K(), o.Patch*o.Patch*basis.K
	shrinker := wnnm.New(n, d)
	zi := interleave(basis.Project(y))
	fallback := func(pixel, band int) float64 { return zp.Band(band)[pixel] }
	zh, err := collaborate(ctx, m, o, leading(zp, matchFeatures), basis.K, pixelMajor, fallback, threads, func() groupEstimator {
		ws := shrinker.NewWorkspace()
		return func(pos []int32, est []float64) float64 {
			zi.gather(est, pos, o.Patch, pixelMajor)
			shrinker.Shrink(est, est, sigma, c, ws)
			return 1
		}
	}, progress)
	if err != nil {
		return nil, err
	}
	return basis.Reconstruct(zh), nil
}

// wienerStage is the collaborative empirical Wiener filter (BM3D's second
// stage) on full-spectrum p×p×B patches: groups of K patches matched on the
// pilot's top spectral eigen-images (close to the full squared distance at a
// fraction of its cost), each filtered in the separable 2-D DCT × spectral
// DCT × Haar domain with the pilot's coefficients as the Wiener oracle
// (package groupwiener), averaged with BM3D's weights. The spectral DCT is applied
// to the whole cube before and undone after: it is orthonormal and per
// pixel, so it commutes with the weighted averaging.
func wienerStage(ctx context.Context, y, pilot *msi.Cube, sigma float64, features int, o blockmatch.Options, threads int, progress func(int)) (*msi.Cube, error) {
	fb, err := subspace.Fit(pilot, nil, min(features, y.Bands))
	if err != nil {
		return nil, err
	}
	feat := fb.Project(pilot)
	dct := groupwiener.DCTMatrix(y.Bands)
	xt, err := filterGroups(ctx, spectralInterleaved(y, dct), spectralInterleaved(pilot, dct), feat, sigma, o, threads, progress)
	if err != nil {
		return nil, err
	}
	return spectralInverse(xt, dct), nil
}

// filterGroups is the collaborative Wiener filter of both Wiener passes:
// groups of similar patches of noisy, matched on feat, each filtered with
// the same group of oracle as the Wiener oracle (package groupwiener) and
// averaged back with its weight; the groups have the largest power of two
// of members (Haar needs one) that o's window allows, at most o.K.
func filterGroups(ctx context.Context, noisy, oracle *pixelCube, feat *msi.Cube, sigma float64, o blockmatch.Options, threads int, progress func(int)) (*msi.Cube, error) {
	m, err := blockmatch.New(noisy.h, noisy.w, o)
	if err != nil {
		return nil, fmt.Errorf("nonlocal: %w", err)
	}
	n := 1
	for n*2 <= m.K() {
		n *= 2
	}
	if n != m.K() {
		o.K = n
		if m, err = blockmatch.New(noisy.h, noisy.w, o); err != nil {
			return nil, fmt.Errorf("nonlocal: %w", err)
		}
	}
	f, err := groupwiener.New(n, o.Patch, noisy.c)
	if err != nil {
		return nil, fmt.Errorf("nonlocal: %w", err)
	}
	return collaborate(ctx, m, o, feat, noisy.c, bandMajor, oracle.at, threads, func() groupEstimator {
		ws := f.NewWorkspace()
		pg := make([]float64, f.Len())
		return func(pos []int32, est []float64) float64 {
			noisy.gather(est, pos, o.Patch, bandMajor)
			oracle.gather(pg, pos, o.Patch, bandMajor)
			return f.Apply(est, est, pg, sigma, ws)
		}
	}, progress)
}

// leading returns the first n bands of the eigen-images z (all of them if
// it has fewer), sharing z's memory: what every stage matches its groups
// on. The trailing eigen-images hold little signal and add their noise to
// every distance; on full scenes at σ = 10, where the low-rank stage keeps
// 15 of them, matching on 8 gives the same PSNR (±0.005 dB) for a fraction
// of the matching (docs/results.md).
func leading(z *msi.Cube, n int) *msi.Cube {
	f := &msi.Cube{Height: z.Height, Width: z.Width, Bands: min(n, z.Bands)}
	f.Data = z.Data[:f.Bands*z.Height*z.Width]
	return f
}

// spectralInterleaved applies the B×B matrix t (row-major) to the spectrum
// of every pixel of c and returns the result as a pixelCube: the Wiener
// pass gathers its groups from the transformed cubes only, so
// band-sequential copies of them are never made (two cubes of the scene's
// size less at the method's peak of memory).
func spectralInterleaved(c *msi.Cube, t []float64) *pixelCube {
	B := c.Bands
	out := newPixelCube(c)
	// Each output value is summed over the bands in order.
	eachPixelBlock(out, func(p0, p1 int, dst []float64) {
		for k := range B {
			for b := range B {
				w := t[k*B+b]
				for i, v := range c.Band(b)[p0:p1] {
					dst[i*B+k] += w * v
				}
			}
		}
	})
	return out
}

// spectralInverse applies the transpose of the B×B matrix t (row-major)
// to the spectrum of every pixel of c: it undoes spectralInterleaved for an
// orthonormal t.
func spectralInverse(c *msi.Cube, t []float64) *msi.Cube {
	B := c.Bands
	out := msi.NewCube(c.Height, c.Width, B)
	// Every output band is its own sum, on its own core.
	parallel.Each(B, func(k int) {
		ok := out.Band(k)
		for b := range B {
			w := t[b*B+k]
			for i, v := range c.Band(b) {
				ok[i] += w * v
			}
		}
	})
	return out
}

// subspaceWienerStage is the collaborative empirical Wiener filter on the
// spectral subspace: with the basis E of the pilot's top-k spectral
// directions about the noisy mean μ, the eigen-images Z = (Y − μ)E keep
// white noise of the same σ, so groups of p×p×k patches of Z, matched on
// the pilot's eigen-images Zp, are filtered in the 2-D DCT × Haar domain
// with Zp's coefficients as the oracle (package groupwiener) and ZEᵀ + μ is
// returned: the noise outside the subspace is dropped with it, and each
// group is k/B the size of a full-spectrum one.
func subspaceWienerStage(ctx context.Context, y, pilot *msi.Cube, sigma float64, k int, o blockmatch.Options, threads int, progress func(int)) (*msi.Cube, error) {
	basis, err := subspace.Fit(pilot, subspace.MeanSpectrum(y), min(k, y.Bands))
	if err != nil {
		return nil, err
	}
	zp := basis.Project(pilot)
	zh, err := filterGroups(ctx, interleave(basis.Project(y)), interleave(zp), leading(zp, matchFeatures), sigma, o, threads, progress)
	if err != nil {
		return nil, err
	}
	return basis.Reconstruct(zh), nil
}
