// Package parafac is the global CP denoiser "parafac": the whole noisy cube
// Y = X + N (rows × columns × bands, N white Gaussian of standard deviation
// σ) is approximated by a CP (PARAFAC) model of rank R,
//
//	X̂ = Σ_{r=1..R} λ_r a_r ∘ b_r ∘ c_r,
//
// fitted by alternating least squares (package multilinear), after X. Liu,
// S. Bourennane and C. Fossati, "Denoising of hyperspectral images using
// the PARAFAC model and statistical performance analysis", IEEE TGRS
// 50(10), 2012. The model is the denoised cube: noise that a rank-R model
// cannot follow is left in the residual.
//
// The rank. Liu et al. take the smallest R whose residual Y − X̂ looks like
// white noise: the covariance matrix of every mode-n unfolding of the
// residual close to a scalar matrix, tested against two absolute
// thresholds. Those thresholds depend on the intensity scale and on the
// cube's size, and on natural scenes the residual of any affordable rank
// keeps spatially correlated texture far above what white noise shows, so
// the test never passes and the rank runs to whatever cap is set (a
// common implementation stops at min(I₀, I₁, I₂), 31 for CAVE). Here R is
// the smallest rank whose residual carries no more energy than the noise,
//
//	‖Y − X̂_R‖² ≤ N·σ²,
//
// Morozov's discrepancy principle: the known σ as in the paper's test, on
// the residual's power instead of its whole covariance, and free of the
// scale. Stein's unbiased risk estimate with the parameter count
// R(I₀+I₁+I₂−2) as degrees of freedom was tried and fails: an ALS fit
// absorbs far more noise than its parameter count suggests, and on a
// 128×128×31 balloons crop at σ = 10 it kept falling from R = 16 to 64
// while the PSNR fell from 43.3 to 39.7 dB. On that crop the discrepancy
// rank (40, 24, 12, 10 at σ = 5, 10, 30, 50) gives 47.3, 43.8, 37.5 and
// 32.8 dB, against 46.6, 43.4, 37.3 and 33.2 dB for the best fixed rank
// tried (4 to 64, each fitted from the HOSVD start). The ranks tried form
// a ladder (rankLadder), each rung fitted by rungIters ALS sweeps starting
// from the rung below plus new seeded random components; short fits
// overstate the residual, so from the first rung that meets the bound the
// choice steps back down while the rung below, refined with up to
// Options.Iters sweeps, meets it too.
//
// Conventions. Every band's mean is subtracted before the decomposition
// and added back after, so that no component is spent on the bands'
// offsets. The result is deterministic for a seed and does not depend on
// the number of threads.
package parafac

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/multilinear"
	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/report"
)

// Options are the settings of the parafac method; a zero field takes its
// default (Resolve).
type Options struct {
	// Rank is the number of CP components R (flag "rank"); 0 chooses it
	// by the discrepancy principle (package comment).
	Rank int
	// Iters is the largest number of ALS sweeps of the final fit (flag
	// "iters"; default 50).
	Iters int
	// Seed seeds the random starting components (flag "seed").
	Seed uint64
	// Threads is the number of worker goroutines (0: GOMAXPROCS); the
	// output does not depend on it.
	Threads int
}

const (
	// DefaultIters is the default number of ALS sweeps of the final fit.
	DefaultIters = 50
	// defaultSeed is 1, as for every seeded method of tdsc.
	defaultSeed = 1
	// rungIters is the number of ALS sweeps at each rung of the rank
	// ladder (each starts from the rung below).
	rungIters = 15
	// alsTol stops ALS when a sweep lowers the residual by less than this
	// fraction.
	alsTol = 1e-5
)

// Resolve returns o with its zero settings set to their defaults (fields);
// the noise level does not change them.
func (o Options) Resolve(sigma float64) Options { return fields.Resolve(o, sigma) }

// Validate checks resolved options against a cube of the given size.
func (o Options) Validate(height, width, bands int) error {
	if err := fields.Check(&o); err != nil {
		return err
	}
	if height < 2 || width < 2 || bands < 2 {
		return fmt.Errorf("the cube is %d×%d×%d: every mode needs at least 2 entries", height, width, bands)
	}
	if o.Rank > 0 && o.Rank*(height+width+bands-2) >= height*width*bands {
		return option.Errorf(rankSetting.Name, o.Rank, "rank %d: a %d×%d×%d cube has fewer entries than the model has parameters", o.Rank, height, width, bands)
	}
	if o.Rank == 0 && !ladderFits(rankLadder[0], [3]int{height, width, bands}) {
		return fmt.Errorf("the cube is %d×%d×%d, too small to choose the CP rank: its least rank, %d, needs at least %d voxels (give --rank)",
			height, width, bands, rankLadder[0], 2*rankLadder[0]*(height+width+bands-2)+2)
	}
	return nil
}

// ladderFits reports whether ChooseRank tries rank on a cube of dims: a
// model of at most half as many parameters as the cube has entries.
func ladderFits(rank int, dims [3]int) bool {
	return rank*(dims[0]+dims[1]+dims[2]-2) < dims[0]*dims[1]*dims[2]/2
}

// Denoiser is the parafac method. It keeps nothing from one run to the
// next, and may be used by several goroutines at once.
type Denoiser struct {
	// Options are the settings; zero fields take their defaults.
	Options Options
	// Report, if not nil, receives log lines and progress.
	Report report.Reporter
}

// Check returns the error Denoise would return for noise level sigma on a
// cube of height×width×bands.
func (d *Denoiser) Check(sigma float64, height, width, bands int) error {
	return d.Options.Resolve(sigma).Validate(height, width, bands)
}

// Denoise returns the estimate of the clean cube for noise of standard
// deviation sigma > 0 on the [0, 255] scale; the Result records the rank
// as given ("auto" when chosen). It stops with ctx.Err() when ctx is
// cancelled.
func (d *Denoiser) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	o := d.Options.Resolve(sigma)
	if err := o.Validate(noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, denoise.Result{}, err
	}
	log := report.OrDiscard(d.Report)
	start := time.Now()
	y := &multilinear.Tensor{Dims: [3]int{noisy.Height, noisy.Width, noisy.Bands}, Data: append([]float64(nil), noisy.Data...)}
	means := y.CentreSlices()
	var start0 *multilinear.CP
	rank := o.Rank
	if rank == 0 {
		ladder, err := ChooseRank(ctx, y, sigma, o.Seed, o.Iters, o.Threads)
		if err != nil {
			return nil, denoise.Result{}, err
		}
		rank, start0 = ladder.Rank, ladder.Model
		log.Logf("parafac: rank %d by the discrepancy principle (%d rungs, %.1f s)", rank, len(ladder.Ranks), time.Since(start).Seconds())
	}
	fitStart := time.Now()
	log.Start("CP-ALS", "sweeps", int64(o.Iters))
	model, res, err := multilinear.CPALS(ctx, y, rank, multilinear.CPOptions{
		MaxIter: o.Iters, Tol: alsTol, Init: multilinear.InitHOSVD, Seed: o.Seed, Start: start0, Workers: o.Threads,
		Progress: func(iter int, r float64) {
			log.Update(int64(iter), fmt.Sprintf("residual %.4g per voxel", r/float64(y.Len())))
		},
	})
	log.Finish()
	if err != nil {
		return nil, denoise.Result{}, err
	}
	log.Logf("parafac: rank %d, %d sweeps, residual %.4g per voxel (σ² = %.4g), %.1f s", rank, len(res),
		res[len(res)-1]/float64(y.Len()), sigma*sigma, time.Since(fitStart).Seconds())
	est, err := model.Reconstruct(ctx, o.Threads)
	if err != nil {
		return nil, denoise.Result{}, err
	}
	est.AddSliceMeans(means)
	// The tensor has the cube's layout: its data is the cube's.
	out := &msi.Cube{Height: noisy.Height, Width: noisy.Width, Bands: noisy.Bands, Data: est.Data}
	out.Wavelengths = append([]float64(nil), noisy.Wavelengths...)
	var given any = o.Rank
	if o.Rank == 0 {
		given = "auto"
	}
	return out, denoise.Result{Settings: denoise.Params("rank", given, "iters", o.Iters, "seed", o.Seed)}, nil
}

// Ladder is the outcome of ChooseRank.
type Ladder struct {
	// Rank is the chosen rank and Model its fit.
	Rank  int
	Model *multilinear.CP
	// Ranks and Residuals are the rungs tried and their squared
	// residuals ‖Y − X̂‖².
	Ranks     []int
	Residuals []float64
}

// rankLadder are the ranks ChooseRank tries, about 25% apart.
var rankLadder = []int{2, 4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256}

// ChooseRank climbs rankLadder (up to the size where the model would have
// half as many parameters as y has entries), fitting each rung by
// rungIters ALS sweeps from the rung below, to the first rung whose
// squared residual is at most N·σ² (the last rung tried if none is).
// Short fits overstate the residual, so it then steps back down: while the
// rung below, refined by up to iters sweeps, also meets N·σ², that rung is
// taken. The returned model is the chosen rung's, refined.
func ChooseRank(ctx context.Context, y *multilinear.Tensor, sigma float64, seed uint64, iters, workers int) (*Ladder, error) {
	dims := y.Dims
	target := float64(y.Len()) * sigma * sigma
	meets := func(residual float64) bool { return residual <= target }
	l := &Ladder{}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var models []*multilinear.CP
	fit := func(rank, sweeps int, start *multilinear.CP) (*multilinear.CP, float64, error) {
		o := multilinear.CPOptions{MaxIter: sweeps, Tol: alsTol, Init: multilinear.InitHOSVD, Seed: seed, Start: start, Workers: workers}
		model, res, err := multilinear.CPALS(ctx, y, rank, o)
		if err != nil {
			return nil, 0, err
		}
		return model, res[len(res)-1], nil
	}
	if !ladderFits(rankLadder[0], dims) {
		return nil, fmt.Errorf("a %d×%d×%d tensor is too small to choose the CP rank", dims[0], dims[1], dims[2])
	}
	for _, rank := range rankLadder {
		if !ladderFits(rank, dims) {
			break
		}
		var start *multilinear.CP
		if len(models) > 0 {
			start = extend(models[len(models)-1], rank, rng)
		}
		model, r, err := fit(rank, rungIters, start)
		if err != nil {
			return nil, err
		}
		l.Ranks, l.Residuals = append(l.Ranks, rank), append(l.Residuals, r)
		models = append(models, model)
		if meets(r) {
			break
		}
	}
	chosen := len(models) - 1
	model, _, err := fit(l.Ranks[chosen], iters, models[chosen])
	if err != nil {
		return nil, err
	}
	for chosen > 0 {
		below, r, err := fit(l.Ranks[chosen-1], iters, models[chosen-1])
		if err != nil {
			return nil, err
		}
		l.Residuals[chosen-1] = r
		if !meets(r) {
			break
		}
		chosen, model = chosen-1, below
	}
	l.Rank, l.Model = l.Ranks[chosen], model
	return l, nil
}

// extend returns m with random unit components appended up to rank, each
// with the smallest weight of m (large enough to keep the ALS Gram
// matrices regular, small enough not to disturb the fit).
func extend(m *multilinear.CP, rank int, rng *rand.Rand) *multilinear.CP {
	old := m.Rank()
	w := math.Inf(1)
	for _, v := range m.Weights {
		w = math.Min(w, v)
	}
	out := &multilinear.CP{Weights: make([]float64, rank)}
	copy(out.Weights, m.Weights)
	for r := old; r < rank; r++ {
		out.Weights[r] = w
	}
	for n := range 3 {
		rows, _ := m.Factors[n].Dims()
		f := mat.NewDense(rows, rank, nil)
		f.Slice(0, rows, 0, old).(*mat.Dense).Copy(m.Factors[n])
		for c := old; c < rank; c++ {
			s := 0.0
			for r := 0; r < rows; r++ {
				v := rng.NormFloat64()
				f.Set(r, c, v)
				s += v * v
			}
			s = math.Sqrt(s)
			for r := 0; r < rows; r++ {
				f.Set(r, c, f.At(r, c)/s)
			}
		}
		out.Factors[n] = f
	}
	return out
}
