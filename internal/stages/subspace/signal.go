package subspace

import (
	"errors"
	"fmt"
	"math"

	"tdsc/internal/msi"
)

// SignalDirections returns the number of leading spectral directions of
// the noisy cube c that hold signal beyond its noise by more than z
// standard errors, with no clean estimate to take the directions from.
// The noise is independent between voxels, of mean zero and variance
// a[b]·x + b[b] at a voxel of band b whose clean value is x (a = 0:
// Gaussian of variance b[b]; a > 0: signal-dependent, Poisson-Gaussian).
//
// The algorithm: along a unit direction e the noise's variance averaged
// over the pixels is v = Σ_b e_b²·(a[b]·μ_b + b[b]), μ_b the band's mean,
// since the clean values average to it; the signal's power along e is the
// spectra's second moment about μ along e less v. Directions fitted on the
// pixels they are measured on would find noise along every one (the
// leading eigenvalues of a noise covariance exceed its mean by about
// 2√(B/N) of it, more than the standard error), so they are fitted on one
// colour of the pixels' checkerboard, the eigenvectors of its second
// moment, and measured on the other, whose noise is independent of them:
// there P = mean(q) − v, q = ((y − μ)·e)² over its n pixels, is an
// unbiased estimate of the signal's power along e, with the standard error
// sd(q)/√n. Directions are counted from the leading one while P exceeds z
// standard errors. (For white noise alone the standard error is v·√(2/n),
// nonlocal.ChooseRank's; signal-dependent noise varies from pixel to pixel,
// and its standard error is larger, by √(mean(v²))/mean(v) over the
// pixels' variances v: about 1.8 times on a dark scene with bright objects
// at a = 4, b = 1.) Pixels with a non-finite value in any band (missing
// voxels, voxels left out as NaN) take no part.
//
// It returns ErrFewPixels when either colour has fewer than
// MinPixelsPerBand·Bands pixels left: impulses on a few bands each, left
// out as NaN, can leave almost no pixel whole (QRNN3D's impulse cases). It
// panics if a or b has not one element per band.
func SignalDirections(c *msi.Cube, a, b []float64, z float64) (int, error) {
	B := c.Bands
	if len(a) != B || len(b) != B {
		panic(fmt.Sprintf("subspace: SignalDirections: %d and %d noise levels for %d bands", len(a), len(b), B))
	}
	var fit, measure []int
	for y := range c.Height {
		for x := range c.Width {
			p := y*c.Width + x
			if !finitePixel(c, p) {
				continue
			}
			if (y+x)%2 == 0 {
				fit = append(fit, p)
			} else {
				measure = append(measure, p)
			}
		}
	}
	if least := MinPixelsPerBand * B; len(fit) < least || len(measure) < least {
		return 0, fmt.Errorf("%w: %d and %d pixels of the two colours, %d needed", ErrFewPixels, len(fit), len(measure), least)
	}
	mean := make([]float64, B)
	noise := make([]float64, B)
	for band := range B {
		values := c.Band(band)
		s := 0.0
		for _, p := range fit {
			s += values[p]
		}
		for _, p := range measure {
			s += values[p]
		}
		mean[band] = s / float64(len(fit)+len(measure))
		noise[band] = a[band]*mean[band] + b[band]
	}
	half := msi.NewCube(1, len(fit), B)
	for band := range B {
		values, dst := c.Band(band), half.Band(band)
		for j, p := range fit {
			dst[j] = values[p]
		}
	}
	moments := NewMoments(mean)
	moments.Add(half)
	basis, err := FitMoment(moments.SecondMoment(nil), mean, B)
	if err != nil {
		return 0, err
	}
	n := float64(len(measure))
	q := make([]float64, len(measure))
	for i := range B {
		v := 0.0
		clear(q)
		for band := range B {
			e := basis.E[band*B+i]
			v += e * e * noise[band]
			values := c.Band(band)
			for j, p := range measure {
				q[j] += e * (values[p] - mean[band])
			}
		}
		var sum, sumSq float64
		for j, t := range q {
			q[j] = t * t
			sum += q[j]
		}
		power := sum / n
		for _, t := range q {
			sumSq += (t - power) * (t - power)
		}
		if power-v <= z*math.Sqrt(sumSq/(n-1)/n) {
			return i, nil
		}
	}
	return B, nil
}

// MinPixelsPerBand is the number of whole pixels per band that each
// colour of SignalDirections' checkerboard needs: enough for the second
// moment's directions and for the standard error of their powers.
const MinPixelsPerBand = 10

// ErrFewPixels is the error of SignalDirections on a cube with too few
// pixels whole in every band.
var ErrFewPixels = errors.New("subspace: too few pixels without a missing voxel to count the directions of signal")

// finitePixel reports whether pixel p of c is finite in every band.
func finitePixel(c *msi.Cube, p int) bool {
	for band := range c.Bands {
		v := c.Band(band)[p]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
