package nonlocal

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/report"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/stages/subspace"
	"tdsc/internal/testenv/cubetest"
	"tdsc/internal/tile"
	"tdsc/internal/tile/tiletest"
)

// repairedLines reads the lines of Cube and which of their voxels Filled
// marks (denoise.RepairLines).
type repairedLines struct {
	tiletest.Lines
	Filled []bool
}

func (r repairedLines) ReadFilled(y0, n int) (*msi.Cube, []bool, error) {
	c, err := r.ReadLines(y0, n)
	if err != nil {
		return nil, nil, err
	}
	h, w := r.Cube.Height, r.Cube.Width
	filled := make([]bool, 0, len(c.Data))
	for b := range c.Bands {
		filled = append(filled, r.Filled[(b*h+y0)*w:][:n*w]...)
	}
	return c, filled, nil
}

// impulseRepaired returns noisy with impulses (0 or 255) at the given
// density in every third band, filled by the repair's first pass
// (repair.Prepare), and which voxels it filled.
func impulseRepaired(t *testing.T, rng *rand.Rand, noisy *msi.Cube, density float64) (*msi.Cube, []bool) {
	t.Helper()
	y := noisy.Clone()
	n := y.Height * y.Width
	det := &sparsenoise.Report{Height: y.Height, Width: y.Width, Bands: y.Bands, Sigma: make([]float64, y.Bands),
		Mask: make([]uint8, len(y.Data)), StripeOffsets: make([][]float64, y.Bands)}
	for b := 0; b < y.Bands; b += 3 {
		for i := b * n; i < (b+1)*n; i++ {
			if rng.Float64() < density {
				y.Data[i] = 255 * float64(rng.IntN(2))
				det.Mask[i] = sparsenoise.Impulse
			}
		}
	}
	z, mask, err := repair.Prepare(y, det, repair.Options{})
	if err != nil {
		t.Fatal(err)
	}
	filled := make([]bool, len(mask))
	for i, m := range mask {
		filled[i] = m != 0
	}
	return z, filled
}

// markedNoise returns an h×w×bands cube of white noise σ and which of its
// voxels marked says are filled (asked in the cube's order).
func markedNoise(rng *rand.Rand, h, w, bands int, sigma float64, marked func(i int) bool) (*msi.Cube, []bool) {
	y := msi.NewCube(h, w, bands)
	filled := make([]bool, len(y.Data))
	for i := range y.Data {
		y.Data[i] = rng.NormFloat64() * sigma
		filled[i] = marked(i)
	}
	return y, filled
}

// TestFilledBlockMeans checks filledBlockMeans against the means summed
// voxel by voxel over each block's unmarked voxels (all of them in a
// block whose every voxel is marked), and the sums of 1/m, on a random
// cube and mask with a whole band and a whole block marked, the last
// partial row and column of blocks left out.
func TestFilledBlockMeans(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	const h, w, bands, s = 13, 10, 5, 4
	y, filled := markedNoise(rng, h, w, bands, 30, func(i int) bool {
		return rng.IntN(3) == 0 || i/(h*w) == 2 // band 2 marked all over
	})
	for yy := range s { // the first block of band 0 marked whole
		for xx := range s {
			filled[yy*w+xx] = true
		}
	}
	means, inverse := filledBlockMeans(y, filled, s)
	if means.Height != h/s || means.Width != w/s || means.Bands != bands {
		t.Fatalf("means are %s, want %d×%d×%d", means.Size(), h/s, w/s, bands)
	}
	for b := range bands {
		wantInverse := 0.0
		for i := range h / s {
			for j := range w / s {
				sum, all, m := 0.0, 0.0, 0
				for yy := i * s; yy < (i+1)*s; yy++ {
					for xx := j * s; xx < (j+1)*s; xx++ {
						all += y.At(yy, xx, b)
						if !filled[(b*h+yy)*w+xx] {
							sum += y.At(yy, xx, b)
							m++
						}
					}
				}
				if m == 0 {
					sum, m = all, s*s
				}
				wantInverse += 1 / float64(m)
				if got := means.At(i, j, b); math.Abs(got-sum/float64(m)) > 1e-12 {
					t.Errorf("block (%d, %d) of band %d: mean %v, want %v", i, j, b, got, sum/float64(m))
				}
			}
		}
		if math.Abs(inverse[b]-wantInverse) > 1e-12 {
			t.Errorf("band %d: Σ1/m = %v, want %v", b, inverse[b], wantInverse)
		}
	}
}

// TestRepairCovariance: on white noise of σ with a share of every band's
// voxels marked (none in some bands, up to 70 % in others), the block
// means of the unmarked voxels have a second moment whose diagonal,
// brought to whole blocks by repairCovariance, is σ²/16 within four
// standard errors in every band (unbrought, the marked bands' are up to
// three times that), and whose off-diagonal is zero within as many; the
// eigenvalues repairCount counts on stay within EigenImages' edge of the
// noise, where those of the corrected second moment pass it.
func TestRepairCovariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const h, w, bands, sigma = 128, 128, 12, 10.0
	y, filled := markedNoise(rng, h, w, bands, sigma, func(i int) bool {
		return rng.Float64() < 0.1*float64(i/(h*w)%8) // 0 to 70 % by band
	})
	means, inverse := filledBlockMeans(y, filled, eigenBlock)
	m := subspace.NewMoments(make([]float64, bands))
	m.Add(means)
	n := means.Height * means.Width
	counted, err := repairCount(m.SecondMoment(make([]float64, bands)), inverse, n)
	if err != nil {
		t.Fatal(err)
	}
	cov := repairCovariance(m.SecondMoment(make([]float64, bands)), inverse, n, sigma)
	corrected, err := subspace.FitMoment(cov, make([]float64, bands), bands)
	if err != nil {
		t.Fatal(err)
	}
	// Noise alone: no direction of the gained covariance passes the
	// noise's edge, where some of the corrected one's do (the marked
	// bands' spread).
	edge := noiseEdge(bands, n, sigma/eigenBlock)
	if counted[0] > edge {
		t.Errorf("the gained covariance's largest eigenvalue %v passes the noise's edge %v", counted[0], edge)
	}
	if corrected.Eigenvalues[0] <= edge {
		t.Errorf("the corrected covariance's largest eigenvalue %v is within the noise's edge %v: the test does not tell the two apart", corrected.Eigenvalues[0], edge)
	}
	whole := sigma * sigma / (eigenBlock * eigenBlock)
	se := whole * math.Sqrt(2/float64(n))
	for b := range bands {
		if d := cov.At(b, b) - whole; math.Abs(d) > 4*se*inverse[b]/float64(n)*eigenBlock*eigenBlock {
			t.Errorf("band %d (share %.0f %%): variance %v, want %v", b, 10*float64(b%8), cov.At(b, b), whole)
		}
		for c := b + 1; c < bands; c++ {
			if v := cov.At(b, c); math.Abs(v) > 4*whole*math.Sqrt(inverse[b]*inverse[c])/float64(n)*eigenBlock*eigenBlock/math.Sqrt(float64(n)) {
				t.Errorf("bands %d, %d: covariance %v, want 0", b, c, v)
			}
		}
	}
}

// TestStreamedRepairBasis: on a many-band cube of rank 3 whose every third
// band had impulses on 70 % of its voxels, filled as the repair's first
// pass fills them, and whose next bands keep stripes that the first pass
// left (offsets of ±σ on a fifth of their columns), the block means of the
// lines as they are keep the bands (the fill's noise, copied from few
// neighbours, and the stripes counted as signal), and the repair's
// statistics (laterMoments) choose the eigen-images that the noisy cube
// without impulses or stripes chooses (k, and the projector on E's
// directions of signal within 5 %, from windows of any height); with
// nothing filled and no stripes, they choose as the lines' own block means.
func TestStreamedRepairBasis(t *testing.T) {
	_, noisy, z, filled := repairCase(t)
	const h, signal, sigma = repairSide, repairSignal, repairSigma
	want, err := eigenBasis(noisy, sigma, 0, 0)
	if err != nil || want == nil {
		t.Fatalf("the cube without impulses: eigen-images %v, error %v; want eigen-images", want != nil, err)
	}
	if plain, err := eigenBasis(z, sigma, 0, 0); err != nil || plain != nil {
		t.Fatalf("the repaired lines' own block means: eigen-images %v, error %v; want the bands", plain != nil, err)
	}
	for _, lines := range []int{8, 20, h} {
		got, _, err := streamedEigenBasis(context.Background(), repairedLines{tiletest.Lines{Cube: z}, filled}, lines, sigma, 0, 0, report.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || got.K != want.K {
			t.Fatalf("windows of %d lines: basis %v, want %d eigen-images", lines, got, want.K)
		}
		if d := projectorDistance(got.Leading(signal), want.Leading(signal)); d > 0.05 {
			t.Errorf("windows of %d lines: the projector on E's leading %d directions is %.3f from the cube's without impulses", lines, signal, d)
		}
	}
	got, _, err := streamedEigenBasis(context.Background(), repairedLines{tiletest.Lines{Cube: noisy}, make([]bool, len(noisy.Data))}, 20, sigma, 0, 0, report.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.K != want.K {
		t.Fatalf("nothing filled: basis %v, want %d eigen-images", got, want.K)
	}
	if d := projectorDistance(got.Leading(signal), want.Leading(signal)); d > 0.01 {
		t.Errorf("nothing filled: the projector on E's leading %d directions is %.3f from the lines' own", signal, d)
	}
}

// The cube of the repair's tests (repairCase).
const (
	repairSide   = 96
	repairBands  = 128
	repairSignal = 3
	repairSigma  = 20.0
)

// repairCase returns the generator it drew from and TestStreamedRepairBasis's
// cubes: a repairSide² cube of repairBands bands and rank repairSignal with
// white noise of repairSigma (noisy); the same with impulses on 70 % of
// every third band's voxels, filled as the repair's first pass fills them,
// and stripes of ±σ on a fifth of the next bands' columns (z); and which
// voxels of z were filled.
func repairCase(t *testing.T) (rng *rand.Rand, noisy, z *msi.Cube, filled []bool) {
	t.Helper()
	rng = rand.New(rand.NewPCG(11, 4))
	noisy = noise.Add(nil, manyBandCube(rng, repairSide, repairSide, repairBands, repairSignal), repairSigma, 3)
	z, filled = impulseRepaired(t, rng, noisy, 0.7)
	withStripes(rng, z, repairSigma)
	return rng, noisy, z, filled
}

// withStripes adds to every band after an impulse band of
// impulseRepaired offsets of ±σ to a fifth of its columns.
func withStripes(rng *rand.Rand, y *msi.Cube, sigma float64) {
	for b := 1; b < y.Bands; b += 3 {
		band := y.Band(b)
		for x := range y.Width {
			if rng.IntN(5) != 0 {
				continue
			}
			offset := sigma * (2*float64(rng.IntN(2)) - 1)
			for i := x; i < len(band); i += y.Width {
				band[i] += offset
			}
		}
	}
}

// TestColumnCentred checks columnCentred against the second moment of
// block means less their column's mean, summed block by block.
func TestColumnCentred(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 9))
	const rows, width, bands = 7, 5, 4
	means := msi.NewCube(rows, width, bands)
	for i := range means.Data {
		means.Data[i] = rng.NormFloat64()*10 + float64(i%width)
	}
	mean := []float64{1, -2, 0.5, 3}
	m := subspace.NewMoments(make([]float64, bands))
	m.Add(means)
	columns := make([]float64, width*bands)
	for b := range bands {
		for i, v := range means.Band(b) {
			columns[b*width+i%width] += v
		}
	}
	got := columnCentred(m.SecondMoment(mean), columns, mean, rows*width)
	for i := range bands {
		for j := range bands {
			want := 0.0
			for y := range rows {
				for x := range width {
					di := means.At(y, x, i) - columns[i*width+x]/rows
					dj := means.At(y, x, j) - columns[j*width+x]/rows
					want += di * dj
				}
			}
			want /= rows * width
			if math.Abs(got.At(i, j)-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("(%d, %d) = %v, want %v", i, j, got.At(i, j), want)
			}
		}
	}
}

// TestPrepareStripsRepair: given the lines of a repair whose own block
// means keep the bands (TestStreamedRepairBasis's cube), PrepareStrips
// returns a Denoiser whose Draft (the repair's first pass) works on the
// repair's eigen-images, with the rank streamed from them, and records
// them in strips, and whose LastPass is the Denoiser as PrepareRepair
// readies it, from the repair's statistics of the whole cube streamed.
func TestPrepareStripsRepair(t *testing.T) {
	_, _, z, filled := repairCase(t)
	const h, w, bands, sigma = repairSide, repairSide, repairBands, repairSigma
	d := &Denoiser{Options: Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1, Group: 32}}
	strips := tile.Plan(h, 32, d.StripGeometry(sigma))
	lines := repairedLines{tiletest.Lines{Cube: z}, filled}
	m, _, err := denoise.PrepareStrips(context.Background(), d, lines, strips, sigma)
	if err != nil {
		t.Fatal(err)
	}
	prepared := m.(*Denoiser)
	want, later, err := streamedEigenBasis(context.Background(), lines, streamLines(w, bands, eigenBlock), sigma, 0, 0, report.Discard)
	if err != nil {
		t.Fatal(err)
	}
	draft := prepared.Draft().(*Denoiser)
	if later == nil || later.spectra == nil || prepared.spectra == nil || !mat.Equal(prepared.spectra, later.spectra) || draft.spectra != prepared.spectra {
		t.Fatal("the passes do not work in the spectra of the repair's rounds streamed from the whole cube")
	}
	checkPreparedEigenImages(t, draft, lines, strips, sigma, want.K)
	_, res := denoiseInStrips(t, draft, z, strips, sigma)
	if !slices.Contains(res.Settings, denoise.Param{Name: "eigen-images", Value: strconv.Itoa(want.K)}) {
		t.Errorf("the first pass's settings %v: want eigen-images=%d", res.Settings, want.K)
	}
	last, ok := prepared.LastPass().(*Denoiser)
	if !ok || !last.readied || last.chosen || last.pilot != nil || last.Options.Rank != 0 || last.firstPasses != draft.basis {
		t.Fatalf("the last pass is prepared from %+v, want the Denoiser readied for the repair", last)
	}
	if l := last.repairLater; l == nil || l.blocks != later.blocks || !mat.Equal(l.moment, later.moment) || !slices.Equal(l.mean, later.mean) || last.spectra != l.spectra {
		t.Fatal("the last pass does not keep the repair's statistics of the whole cube streamed")
	}
}

// projectorDistance returns ‖EᵃEᵃᵀ − EᵇEᵇᵀ‖_F / √(kᵃ + kᵇ), the distance
// between the projectors on the k directions of two bases (0: the same
// span, 1: orthogonal spans).
func projectorDistance(a, b *subspace.Basis) float64 {
	var pa, pb mat.Dense
	ea, eb := mat.NewDense(a.Bands, a.K, a.E), mat.NewDense(b.Bands, b.K, b.E)
	pa.Mul(ea, ea.T())
	pb.Mul(eb, eb.T())
	pa.Sub(&pa, &pb)
	return mat.Norm(&pa, 2) / math.Sqrt(float64(a.K+b.K))
}

// TestRepairBasis: on TestStreamedRepairBasis's cube (impulses filled by
// the first pass, stripes left), the whole cube's repairBasis is the
// streamed one's from windows of its lines (laterMoments) to rounding:
// the same k, the same mean, the same span, and the same spectra and
// moment for the later passes (laterBases), the moment that of the block
// means summed block by block, the columns' means kept; a cube of fewer
// bands than eigen-images need keeps its bands.
func TestRepairBasis(t *testing.T) {
	rng, _, z, filled := repairCase(t)
	const h, w, sigma = repairSide, repairSide, repairSigma
	want, wantLater, err := streamedEigenBasis(context.Background(), repairedLines{tiletest.Lines{Cube: z}, filled}, 20, sigma, 0, 0, report.Discard)
	if err != nil || want == nil || wantLater == nil || wantLater.spectra == nil {
		t.Fatalf("streamed: eigen-images %v, spectra %v, error %v; want both", want != nil, wantLater != nil && wantLater.spectra != nil, err)
	}
	got, later, err := repairBasis(z, filled, sigma, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if later == nil || later.spectra == nil || !sameColumnsUpToSign(later.spectra, wantLater.spectra, 1e-6) {
		t.Errorf("the spectra of the rounds from the whole cube are not the streamed ones")
	}
	// The last pass's statistics: the oracle is the second moment of the
	// block means about the mean spectrum, each column of blocks' mean
	// kept, summed block by block, less the excess noise of the filled
	// voxels on its diagonal.
	means, inverse := filledBlockMeans(z, filled, eigenBlock)
	mean, bands, n := subspace.MeanSpectrum(z), z.Bands, means.Height*means.Width
	for _, l := range []*laterBases{later, wantLater} {
		if l == nil || l.moment == nil || l.blocks != n {
			t.Fatalf("the last pass's statistics %v, want the moment of %d block means", l, n)
		}
		for i := range bands {
			if math.Abs(l.mean[i]-mean[i]) > 1e-9*(1+math.Abs(mean[i])) {
				t.Fatalf("band %d: the last pass's mean %v, the cube's %v", i, l.mean[i], mean[i])
			}
			for j := i; j < bands; j++ {
				want := 0.0
				for p := range n {
					want += (means.Band(i)[p] - mean[i]) * (means.Band(j)[p] - mean[j])
				}
				want /= float64(n)
				if i == j {
					want -= sigma * sigma * (inverse[i]/float64(n) - 1.0/(eigenBlock*eigenBlock))
				}
				if got := l.moment.At(i, j); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
					t.Fatalf("the last pass's moment (%d, %d) = %v, the oracle's %v", i, j, got, want)
				}
			}
		}
	}
	if got == nil || got.K != want.K {
		t.Fatalf("whole cube: basis %v, want %d eigen-images", got, want.K)
	}
	for b, m := range want.Mean {
		if math.Abs(got.Mean[b]-m) > 1e-9*(1+math.Abs(m)) {
			t.Fatalf("band %d: mean %v, streamed %v", b, got.Mean[b], m)
		}
	}
	if d := projectorDistance(got, want); d > 1e-6 {
		t.Errorf("the projectors on the whole cube's and the streamed E are %.3g apart", d)
	}
	few, fewFilled := impulseRepaired(t, rng, noise.Add(nil, manyBandCube(rng, h, w, 31, 3), sigma, 3), 0.7)
	if got, _, err := repairBasis(few, fewFilled, sigma, 0, 0); err != nil || got != nil {
		t.Errorf("31 bands: eigen-images %v, error %v; want the bands", got != nil, err)
	}
}

// TestPrepareRepair: readied for a repair of TestStreamedRepairBasis's
// cube, whose own block means keep the bands, a Denoiser's Draft (the
// repair's first pass) works on the eigen-images repairBasis chooses, on
// any number of threads alike, and so do its blocks (PrepareStrips);
// the Denoiser itself (the last pass) chooses on its own cube, its
// blocks fitting their rounds' spectra on the repair's statistics of the
// whole cube and their pilot (stripSpectra); on 31 bands it is left as
// it is.
func TestPrepareRepair(t *testing.T) {
	rng, _, z, filled := repairCase(t)
	const h, w, sigma = repairSide, repairSide, repairSigma
	want, later, err := repairBasis(z, filled, sigma, 0, 0)
	if err != nil || want == nil || later == nil || later.spectra == nil {
		t.Fatalf("eigen-images %v, spectra %v, error %v; want both", want != nil, later != nil && later.spectra != nil, err)
	}
	spectra := later.spectra
	var outs []*msi.Cube
	for _, threads := range []int{1, 2} {
		d := &Denoiser{Options: Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1, Group: 32, Threads: threads}}
		m, err := d.PrepareRepair(z, filled, sigma)
		if err != nil {
			t.Fatal(err)
		}
		prepared := m.(*Denoiser)
		draft := prepared.Draft().(*Denoiser)
		if draft.basis == nil || draft.basis.K != want.K || projectorDistance(draft.basis, want) > 1e-12 {
			t.Fatalf("the first pass's basis %v, want repairBasis's %d eigen-images", draft.basis, want.K)
		}
		if prepared.chosen || prepared.later != nil {
			t.Error("the last pass does not choose on its own cube")
		}
		if l := prepared.repairLater; l == nil || l.blocks != later.blocks || !mat.Equal(l.moment, later.moment) || !slices.Equal(l.mean, later.mean) {
			t.Error("the last pass does not keep the repair's statistics of the whole cube for its blocks")
		}
		if prepared.spectra == nil || !mat.Equal(prepared.spectra, spectra) || draft.spectra != prepared.spectra {
			t.Error("the passes do not work in the spectra of the repair's rounds")
		}
		out, res, err := draft.Denoise(context.Background(), z, sigma)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(res.Settings, denoise.Param{Name: "eigen-images", Value: strconv.Itoa(want.K)}) {
			t.Errorf("the first pass's settings %v: want eigen-images=%d", res.Settings, want.K)
		}
		outs = append(outs, out)
		if threads > 1 {
			continue
		}
		// A whole cube taller than blockLines runs in blocks, prepared
		// as strips of its lines: they keep the repair's basis, where
		// the lines' own block means would keep the bands.
		blocks, _, err := draft.PrepareStrips(context.Background(), tiletest.Lines{Cube: z}, tile.Plan(h, 32, d.StripGeometry(sigma)), sigma)
		if err != nil {
			t.Fatal(err)
		}
		if got := blocks.(*Denoiser).basis; got != draft.basis {
			t.Errorf("the first pass's blocks' basis %v, want the repair's", got)
		}
		// The last pass's blocks choose their basis from the lines, and
		// keep the repair's spectra for their rounds.
		last, _, err := prepared.PrepareStrips(context.Background(), tiletest.Lines{Cube: z}, tile.Plan(h, 32, d.StripGeometry(sigma)), sigma)
		if err != nil {
			t.Fatal(err)
		}
		if last.(*Denoiser).spectra != prepared.spectra || blocks.(*Denoiser).spectra != prepared.spectra {
			t.Error("the passes' blocks do not keep the spectra of the repair's rounds")
		}
		if last.(*Denoiser).later != prepared.repairLater || blocks.(*Denoiser).later != nil {
			t.Error("the last pass's blocks, and they alone, do not fit their rounds' spectra on the repair's statistics (stripSpectra)")
		}
	}
	if !slices.Equal(outs[0].Data, outs[1].Data) {
		t.Error("1 and 2 threads give different first passes")
	}
	few, fewFilled := impulseRepaired(t, rng, noise.Add(nil, manyBandCube(rng, h, w, 31, 3), sigma, 3), 0.7)
	d := &Denoiser{Options: Options{Pilot: pilotForTests()}}
	if m, err := d.PrepareRepair(few, fewFilled, sigma); err != nil || m != denoise.Method(d) {
		t.Errorf("31 bands: %v (error %v), want the Denoiser itself", m, err)
	}
}

// TestRoundsInSpectra: a repair's last pass, given the spectra of the
// whole cube's rounds, keeps bandPilot's own spectra on a whole cube at
// once (the same bytes as without them) and works in the whole cube's on
// a strip (other bytes than without them).
func TestRoundsInSpectra(t *testing.T) {
	_, noisy, z, filled := repairCase(t)
	const h, w, bands, sigma = repairSide, repairSide, repairBands, repairSigma
	d := &Denoiser{Options: Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1, Group: 32}}
	denoised := func(d *Denoiser, c *msi.Cube) []float64 {
		t.Helper()
		out, _, err := d.Denoise(context.Background(), c, sigma)
		if err != nil {
			t.Fatal(err)
		}
		return out.Data
	}
	m, err := d.PrepareRepair(z, filled, sigma)
	if err != nil {
		t.Fatal(err)
	}
	last := m.(*Denoiser)
	if last.spectra == nil {
		t.Fatal("the repair has no spectra for its rounds")
	}
	own := *last
	own.spectra = nil
	if !slices.Equal(denoised(last, noisy), denoised(&own, noisy)) {
		t.Error("the last pass on the whole cube at once does not keep bandPilot's spectra")
	}
	strips := tile.Plan(h, 32, d.StripGeometry(sigma))
	sm, _, err := denoise.PrepareStrips(context.Background(), d, repairedLines{tiletest.Lines{Cube: z}, filled}, strips, sigma)
	if err != nil {
		t.Fatal(err)
	}
	strip := sm.(*Denoiser)
	read := strips[1].Read
	c := noisy.Crop(read.Start, 0, 0, read.End-read.Start, w, bands)
	ownStrip := *strip
	ownStrip.spectra = nil
	if slices.Equal(denoised(strip, c), denoised(&ownStrip, c)) {
		t.Error("the last pass on a strip does not work in the whole cube's spectra")
	}
}

// TestLastPass: the method a repair's last pass in strips is prepared
// from (LastPass of PrepareStrips on the first pass's lines), prepared on
// the cube the first passes leave, learns what a whole run's last pass
// learns in its blocks (PrepareRepair on the first pass's cube, then
// PrepareStrips on that cube, as denoiseBlocks does): the same rank,
// eigen-images, rounds' spectra and repair's statistics, and strip by
// strip the same result within rounding (the statistics of the first
// pass's lines are streamed in windows, the whole run's summed at once).
// A Denoiser not prepared on a repair's lines has no LastPass.
func TestLastPass(t *testing.T) {
	_, noisy, z, filled := repairCase(t)
	const h, sigma = repairSide, repairSigma
	ctx := context.Background()
	d := &Denoiser{Options: Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1, Group: 32}}
	strips := tile.Plan(h, 32, d.StripGeometry(sigma))
	// The whole run's last pass in its blocks.
	m, err := d.PrepareRepair(z, filled, sigma)
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := m.(*Denoiser).PrepareStrips(ctx, tiletest.Lines{Cube: noisy}, strips, sigma)
	if err != nil {
		t.Fatal(err)
	}
	// The strips' last pass, after the first passes.
	first, _, err := denoise.PrepareStrips(ctx, d, repairedLines{tiletest.Lines{Cube: z}, filled}, strips, sigma)
	if err != nil {
		t.Fatal(err)
	}
	lp, ok := first.(denoise.LastPasser)
	if !ok || lp.LastPass() == nil {
		t.Fatal("the strips of a repair have no last pass to prepare")
	}
	last, _, err := denoise.PrepareStrips(ctx, lp.LastPass(), tiletest.Lines{Cube: noisy}, strips, sigma)
	if err != nil {
		t.Fatal(err)
	}
	w, s := whole.(*Denoiser), last.(*Denoiser)
	if s.Options.Rank != w.Options.Rank {
		t.Errorf("the strips' last pass has rank %d, the whole run's %d", s.Options.Rank, w.Options.Rank)
	}
	if s.basis == nil || w.basis == nil || s.basis.K != w.basis.K || projectorDistance(s.basis, w.basis) > 1e-9 {
		t.Fatalf("the strips' last pass's eigen-images %v, the whole run's %v", s.basis, w.basis)
	}
	if s.later == nil || s.later != lp.LastPass().(*Denoiser).repairLater || w.later == nil {
		t.Error("the strips' last pass does not fit its rounds' spectra on the repair's statistics of the first pass's lines")
	}
	if s.spectra == nil || w.spectra == nil || !mat.EqualApprox(s.spectra, w.spectra, 1e-9) {
		t.Error("the strips' last pass works in other spectra than the whole run's")
	}
	got, _ := denoiseInStrips(t, s, noisy, strips, sigma)
	want, _ := denoiseInStrips(t, w, noisy, strips, sigma)
	if rms := cubetest.RMSE(got, want); rms > 1e-6 {
		t.Errorf("the strips' last pass differs from the whole run's by %.3g RMS", rms)
	}
	if lp := w.LastPass(); lp != nil {
		t.Errorf("the blocks of a whole run's last pass have a last pass to prepare: %v", lp)
	}
}
