// Package metrics measures how close a multispectral cube is to a reference
// with the four figures of the Table 2 protocol: PSNR, SSIM, SAM and ERGAS.
//
// All cubes are on the [0, 255] scale (see package msi), band-sequential:
// voxel (y, x, b) is Data[(b*Height+y)*Width+x]. A voxel missing (NaN: no
// data) in the reference or the input is left out of every figure: of its
// band's MSE and mean, of every SSIM window that holds it, and its pixel
// of the SAM; a band with no voxel left has NaN figures, which the means
// over bands leave out. So that a score never hides what it left out, every
// Report counts the voxels it scored against those with data in the
// reference (its coverage): a voxel missing in the input only is data the
// figures did not see, which a regression gate must not pass unremarked
// (package gate).
//
// Definitions (the reference values were computed with numpy and
// scikit-image, and these functions reproduce them):
//
//   - PSNR of one band: 10·log10(255²/MSE_b) dB with peak 255. A band equal to
//     its reference has MSE 0 and PSNR +Inf; the mean over bands is then +Inf
//     too.
//   - SSIM of one band: Wang, Bovik, Sheikh and Simoncelli (2004), see [SSIM].
//   - SAM: the spectral angle arccos(⟨r, x⟩/(|r||x|)) of every pixel, in
//     DEGREES, averaged over the pixels; pixels where either spectrum is all
//     zero are skipped.
//   - ERGAS (Wald): 100·sqrt((1/B)·Σ_b MSE_b/μ_b²), μ_b the mean of reference
//     band b; the resolution ratio of Wald's definition is 1 for denoising.
//
// Papers often use the MATLAB script MSIQA.m instead, which reports SAM in
// radians and divides each band's MSE by μ_b rather than μ_b² in ERGAS, so
// their SAM and ERGAS values are not comparable with these.
package metrics

import (
	"context"
	"fmt"
	"math"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
)

// Peak is the peak signal value of the PSNR and the dynamic range L of the
// SSIM: the top of the [0, 255] working scale.
const Peak = 255.0

// Report holds the metrics of a cube against its reference.
type Report struct {
	PSNR     float64   // mean over bands of BandPSNR, dB (+Inf if a band is exact)
	SSIM     float64   // mean over bands of BandSSIM
	SAM      float64   // mean spectral angle, degrees
	ERGAS    float64   // Wald's ERGAS
	BandPSNR []float64 // PSNR of every band, dB
	BandSSIM []float64 // SSIM of every band

	// Coverage: the voxels scored (with data in the reference and the
	// input) and the voxels with data in the reference, in all and band
	// by band. Scored < WithData when the input lacks voxels the
	// reference has.
	Scored, WithData         int
	BandScored, BandWithData []int
}

// Missing returns the number of voxels with data in the reference that
// the input lacks, and so were not scored.
func (r *Report) Missing() int { return r.WithData - r.Scored }

// Coverage returns the fraction of the reference's voxels with data that
// were scored, Scored/WithData, in [0, 1]; NaN when the reference has no
// voxel with data.
func (r *Report) Coverage() float64 { return float64(r.Scored) / float64(r.WithData) }

// Unscored returns the 0-based bands in which the reference has data but
// no voxel was scored: bands whose figures are NaN for want of the
// input's voxels, not for want of the reference's.
func (r *Report) Unscored() []int {
	var bands []int
	for b, n := range r.BandWithData {
		if n > 0 && r.BandScored[b] == 0 {
			bands = append(bands, b)
		}
	}
	return bands
}

// Evaluate computes the metrics of x against the reference ref. It returns
// an error if the two cubes differ in size or are smaller than the 11×11
// SSIM window, and ctx.Err() if ctx is done before every band is scored. The
// bands are processed in parallel, one goroutine per CPU.
func Evaluate(ctx context.Context, ref, x *msi.Cube) (*Report, error) {
	if !ref.SameSize(x) {
		return nil, fmt.Errorf("metrics: reference is %s, input is %s", ref.Size(), x.Size())
	}
	if ref.Height < ssimWindow || ref.Width < ssimWindow {
		return nil, fmt.Errorf("metrics: image is %s, smaller than the %d×%d SSIM window",
			ref.Size(), ssimWindow, ssimWindow)
	}
	nb := ref.Bands
	r := &Report{BandPSNR: make([]float64, nb), BandSSIM: make([]float64, nb), BandScored: make([]int, nb), BandWithData: make([]int, nb)}
	mse := make([]float64, nb)

	workers := min(parallel.Workers(0), nb)
	spaces := make([]*ssimWorkspace, workers)
	err := parallel.For(ctx, nb, workers, func(w, b int) error {
		if spaces[w] == nil {
			spaces[w] = newSSIMWorkspace(ref.Width)
		}
		rb, xb := ref.Band(b), x.Band(b)
		mse[b], r.BandScored[b] = squaredError(rb, xb)
		r.BandWithData[b] = present(rb)
		r.BandPSNR[b] = psnrFromMSE(mse[b])
		r.BandSSIM[b] = spaces[w].ssim(rb, xb, ref.Height, ref.Width)
		return nil
	})
	if err != nil {
		return nil, err
	}

	for b := range nb {
		r.Scored += r.BandScored[b]
		r.WithData += r.BandWithData[b]
	}
	r.PSNR = meanBands(r.BandPSNR)
	r.SSIM = meanBands(r.BandSSIM)
	r.SAM = SAM(ref, x)
	r.ERGAS = ergasFromMSE(ref, x, mse)
	return r, nil
}

// PSNR returns the peak signal-to-noise ratio 10·log10(255²/MSE) in dB of
// the band x against the reference band ref; it is +Inf when they are equal.
// It panics if the lengths differ or are zero.
func PSNR(ref, x []float64) float64 {
	return psnrFromMSE(meanSquaredError(ref, x))
}

// SAM returns the mean spectral angle in degrees between the spectra of x
// and those of ref, pixel by pixel. Pixels where either spectrum is all zero
// or has a missing (NaN) voxel are skipped; the cosine is clamped to
// [-1, 1] against round-off. It returns NaN when every pixel is skipped and
// panics if the sizes differ.
func SAM(ref, x *msi.Cube) float64 {
	mustSameSize(ref, x)
	n := ref.Height * ref.Width
	// The spectra are strided by n in the band-sequential layout; walking a
	// block of pixels band by band keeps the reads contiguous.
	const block = 2048
	var dot, rr, xx [block]float64
	sum, count := 0.0, 0
	for p0 := 0; p0 < n; p0 += block {
		m := min(block, n-p0)
		clear(dot[:m])
		clear(rr[:m])
		clear(xx[:m])
		for b := range ref.Bands {
			rb := ref.Data[b*n+p0 : b*n+p0+m]
			xb := x.Data[b*n+p0 : b*n+p0+m]
			for i, rv := range rb {
				xv := xb[i]
				dot[i] += rv * xv
				rr[i] += rv * rv
				xx[i] += xv * xv
			}
		}
		for i := range m {
			if rr[i] == 0 || xx[i] == 0 || math.IsNaN(dot[i]) {
				continue
			}
			c := dot[i] / (math.Sqrt(rr[i]) * math.Sqrt(xx[i]))
			sum += math.Acos(max(-1, min(1, c)))
			count++
		}
	}
	return sum / float64(count) * (180 / math.Pi)
}

// ERGAS returns Wald's relative dimensionless global error
// 100·sqrt((1/B)·Σ_b MSE_b/μ_b²) of x against ref, μ_b the mean of reference
// band b. A reference band with zero mean makes it +Inf (NaN if that band
// is also exact). It panics if the sizes differ.
func ERGAS(ref, x *msi.Cube) float64 {
	mustSameSize(ref, x)
	mse := make([]float64, ref.Bands)
	for b := range mse {
		mse[b] = meanSquaredError(ref.Band(b), x.Band(b))
	}
	return ergasFromMSE(ref, x, mse)
}

// ergasFromMSE is ERGAS from the bands' MSE, each band's mean taken over
// the voxels that are in neither cube missing; a band with none left out.
func ergasFromMSE(ref, x *msi.Cube, mse []float64) float64 {
	sum, bands := 0.0, 0
	for b, e := range mse {
		if math.IsNaN(e) {
			continue
		}
		mu := meanPresent(ref.Band(b), x.Band(b))
		sum += e / (mu * mu)
		bands++
	}
	return 100 * math.Sqrt(sum/float64(bands))
}

func psnrFromMSE(mse float64) float64 {
	return 10 * math.Log10(Peak*Peak/mse)
}

// meanSquaredError is the MSE of x against ref over the voxels missing
// in neither (NaN when every voxel is).
func meanSquaredError(ref, x []float64) float64 {
	mse, _ := squaredError(ref, x)
	return mse
}

// squaredError returns the MSE of x against ref over the voxels missing
// in neither (NaN when every voxel is) and the number of those voxels.
func squaredError(ref, x []float64) (mse float64, n int) {
	if len(ref) != len(x) || len(ref) == 0 {
		panic(fmt.Sprintf("metrics: bands of %d and %d values", len(ref), len(x)))
	}
	sum := 0.0
	for i, r := range ref {
		if d := x[i] - r; !math.IsNaN(d) {
			sum += d * d
			n++
		}
	}
	return sum / float64(n), n
}

// present counts the voxels of v that are not missing (NaN).
func present(v []float64) int {
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) {
			n++
		}
	}
	return n
}

// meanPresent is the mean of ref over the voxels missing in neither ref
// nor x.
func meanPresent(ref, x []float64) float64 {
	sum, n := 0.0, 0
	for i, r := range ref {
		if !math.IsNaN(r) && !math.IsNaN(x[i]) {
			sum += r
			n++
		}
	}
	return sum / float64(n)
}

// meanBands is the mean of the bands' figures v, NaN (a band with no
// voxel left) left out.
func meanBands(v []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range v {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	return sum / float64(n)
}

func mustSameSize(ref, x *msi.Cube) {
	if !ref.SameSize(x) {
		panic(fmt.Sprintf("metrics: reference is %s, input is %s", ref.Size(), x.Size()))
	}
}
