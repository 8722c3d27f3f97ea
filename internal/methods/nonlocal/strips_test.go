package nonlocal

import (
	"context"
	"gonum.org/v1/gonum/mat"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/report"
	"tdsc/internal/testenv/cubetest"
	"tdsc/internal/tile"
	"tdsc/internal/tile/tiletest"
)

// TestStreamedRank: on cubes whose signal lies along random directions at
// given powers, with coefficients that are the same over blocks of 8×8
// pixels (spatially correlated, as a scene's are), the rank streamed from
// strips of any height is the rank ChooseRank chooses with the clean cube
// as its estimate, but for a direction as weak as two thresholds: the
// directions of a box mean catch only part of it, where a clean
// estimate's catch all, so the streamed rank may stop before it (the
// estimate of a real run is not clean either). (On independent pixels the
// box mean would average the signal away with the noise, and its
// directions would spread the strong directions' power over the weak.)
func TestStreamedRank(t *testing.T) {
	for _, tc := range rankCases {
		clean, noisy := cubeWithPowers(tc.powers, tc.sigma, 8)
		want, err := ChooseRank(noisy, clean, tc.sigma)
		if err != nil {
			t.Fatal(err)
		}
		weak := tc.powers[len(tc.powers)-1] == 2
		for _, lines := range []int{1, 7, rankHeight} {
			strips := tile.Plan(rankHeight, lines, tile.Geometry{Align: 1})
			got, err := StreamedRank(context.Background(), tiletest.Lines{Cube: noisy}, strips, tc.sigma, report.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got != want && !(weak && got == want-1) {
				t.Errorf("powers %v×threshold, σ %v, strips of %d lines: rank %d, ChooseRank %d", tc.powers, tc.sigma, lines, got, want)
			}
		}
	}
}

// TestPrepareStrips: a small cube denoised in strips with what
// PrepareStrips learned from the whole cube comes out close to the whole
// cube's result, with the whole cube's rank, bit for bit the same for any
// number of threads; the prepared method's Draft keeps the shared pilot
// and rank.
func TestPrepareStrips(t *testing.T) {
	full, err := formats.Open("../../../testdata/balloons_crop128")
	if err != nil {
		t.Fatal(err)
	}
	clean := full.Crop(0, 0, 0, 64, 40, 6)
	const sigma = 30
	noisy := noise.Add(nil, clean, sigma, 1)
	var stripsOut []*msi.Cube
	for _, threads := range []int{1, 3} {
		d := &Denoiser{Options: Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1, Group: 32, Threads: threads}}
		geom := d.StripGeometry(sigma)
		strips := tile.Plan(noisy.Height, 16, geom)
		if len(strips) < 3 {
			t.Fatalf("%d strips, want at least 3", len(strips))
		}
		m, _, err := denoise.PrepareStrips(context.Background(), d, tiletest.Lines{Cube: noisy}, strips, sigma)
		if err != nil {
			t.Fatal(err)
		}
		prepared, ok := m.(*Denoiser)
		if !ok || prepared.pilot == nil || prepared.Options.Rank == 0 {
			t.Fatalf("PrepareStrips returned %T %+v, want a Denoiser with a pilot and a rank", m, m)
		}
		want, err := StreamedRank(context.Background(), tiletest.Lines{Cube: noisy}, strips, sigma, report.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if prepared.Options.Rank != want {
			t.Errorf("prepared rank %d, StreamedRank %d", prepared.Options.Rank, want)
		}
		draft := prepared.Draft().(*Denoiser)
		if draft.pilot != prepared.pilot || draft.Options.Rank != prepared.Options.Rank {
			t.Errorf("the draft keeps the pilot: %v; its rank %d, the prepared method's %d", draft.pilot == prepared.pilot, draft.Options.Rank, prepared.Options.Rank)
		}
		got, _ := denoiseInStrips(t, prepared, noisy, strips, sigma)
		stripsOut = append(stripsOut, got)
		if threads > 1 {
			continue
		}
		whole, _, err := d.Denoise(context.Background(), noisy, sigma)
		if err != nil {
			t.Fatal(err)
		}
		// The strips lose a little where their halos cut the groups'
		// search windows: far less than the denoising gains.
		pw, ps := cubetest.PSNR(t, clean, whole), cubetest.PSNR(t, clean, got)
		if noisyPSNR := cubetest.PSNR(t, clean, noisy); ps < pw-0.5 || ps-noisyPSNR < 5 {
			t.Errorf("strips %.2f dB, whole cube %.2f dB, noisy %.2f dB", ps, pw, noisyPSNR)
		}
		if rmse := cubetest.RMSE(got, whole); rmse > 0.05*sigma {
			t.Errorf("strips differ from the whole cube by %.2f RMS, more than σ/20", rmse)
		}
	}
	for i, v := range stripsOut[0].Data {
		if stripsOut[1].Data[i] != v {
			t.Fatalf("voxel %d: %v with 1 thread, %v with 3", i, v, stripsOut[1].Data[i])
		}
	}
}

// TestBoxMean checks the separable box mean against the mean of the
// clipped box, pixel by pixel.
func TestBoxMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sh := range [][4]int{{9, 7, 2, 2}, {3, 11, 1, 2}, {1, 1, 1, 1}, {6, 5, 3, 0}} {
		c := cubetest.Uniform(rng, sh[0], sh[1], sh[2], -5, 5)
		got := boxMean(c, sh[3])
		for b := range c.Bands {
			for y := range c.Height {
				for x := range c.Width {
					s, n := 0.0, 0
					for yy := y - sh[3]; yy <= y+sh[3]; yy++ {
						for xx := x - sh[3]; xx <= x+sh[3]; xx++ {
							if yy >= 0 && yy < c.Height && xx >= 0 && xx < c.Width {
								s += c.At(yy, xx, b)
								n++
							}
						}
					}
					if want := s / float64(n); math.Abs(got.At(y, x, b)-want) > 1e-12 {
						t.Fatalf("%v: (%d, %d, %d) = %v, want %v", sh, y, x, b, got.At(y, x, b), want)
					}
				}
			}
		}
	}
}

// TestStreamedEigenBasis: the basis of the eigen-images streamed in
// windows of lines (any multiple of a block, one that cuts the cube's last
// partial block row, and all of it at once) is the whole cube's, μ, E
// (its projector), the eigenvalues and k, on random many-band cubes; and
// where the whole cube keeps its bands, so do the streamed statistics.
func TestStreamedEigenBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2))
	for _, tc := range []struct {
		h, w, bands, rank, least, force int
		sigma                           float64
	}{
		{66, 63, 70, 3, 0, 0, 10},
		{41, 57, 96, 5, 0, 0, 20},
		{41, 57, 96, 5, 0, 20, 20}, // forced k
		{41, 57, 96, 5, 25, 0, 20}, // a least dimension above a quarter of the bands
		{66, 63, 63, 3, 0, 0, 10},  // fewer bands than the rule needs
		{28, 31, 70, 3, 0, 0, 10},  // fewer blocks than bands
		{66, 63, 70, 3, 0, -1, 10}, // the bands forced
	} {
		noisy := noise.Add(nil, manyBandCube(rng, tc.h, tc.w, tc.bands, tc.rank), tc.sigma, 2)
		want, err := eigenBasis(noisy, tc.sigma, tc.least, tc.force)
		if err != nil {
			t.Fatal(err)
		}
		for _, lines := range []int{4, 12, tc.h + 4 - tc.h%4} {
			got, later, err := streamedEigenBasis(context.Background(), tiletest.Lines{Cube: noisy}, lines, tc.sigma, tc.least, tc.force, report.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if later != nil {
				t.Fatalf("%+v, windows of %d lines: a repair's spectra and directions from lines not a repair's", tc, lines)
			}
			if (got == nil) != (want == nil) {
				t.Fatalf("%+v, windows of %d lines: eigen-images %v, the whole cube's %v", tc, lines, got != nil, want != nil)
			}
			if want == nil {
				continue
			}
			if got.K != want.K {
				t.Fatalf("%+v, windows of %d lines: k = %d, the whole cube's %d", tc, lines, got.K, want.K)
			}
			for b := range want.Bands {
				if math.Abs(got.Mean[b]-want.Mean[b]) > 1e-9 {
					t.Fatalf("%+v, windows of %d lines: μ[%d] = %v, the whole cube's %v", tc, lines, b, got.Mean[b], want.Mean[b])
				}
			}
			for i, v := range want.Eigenvalues {
				if math.Abs(got.Eigenvalues[i]-v) > 1e-9*(1+want.Eigenvalues[0]) {
					t.Fatalf("%+v, windows of %d lines: eigenvalue %d = %v, the whole cube's %v", tc, lines, i, got.Eigenvalues[i], v)
				}
			}
			var pg, pw mat.Dense
			eg, ew := mat.NewDense(got.Bands, got.K, got.E), mat.NewDense(want.Bands, want.K, want.E)
			pg.Mul(eg, eg.T())
			pw.Mul(ew, ew.T())
			if !mat.EqualApprox(&pg, &pw, 1e-8) {
				t.Errorf("%+v, windows of %d lines: the projector on E is not the whole cube's", tc, lines)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("windows of 6 lines (not whole blocks) did not panic")
		}
	}()
	noisy := noise.Add(nil, manyBandCube(rng, 66, 63, 70, 3), 10, 2)
	streamedEigenBasis(context.Background(), tiletest.Lines{Cube: noisy}, 6, 10, 0, 0, report.Discard)
}

// TestPrepareStripsEigenImages: a small many-band cube in strips runs on
// the eigen-images of the whole cube's basis (streamedEigenBasis), with
// its pilot's dictionary learned on them and the rank counted along their
// smoothed directions (streamedEigenRank),
// returns to the bands through bandPilot, comes out close to the whole cube's
// result, and bit for bit the same for 1 and 2 threads.
func TestPrepareStripsEigenImages(t *testing.T) {
	const h, w, bands, sigma = 48, 36, 70, 20.0
	clean := manyBandCube(rand.New(rand.NewPCG(7, 3)), h, w, bands, 3)
	noisy := noise.Add(nil, clean, sigma, 1)
	whole, err := eigenBasis(noisy, sigma, 0, 0)
	if err != nil || whole == nil {
		t.Fatalf("eigen-images %v, error %v: want eigen-images", whole != nil, err)
	}
	var outs []*msi.Cube
	for _, threads := range []int{1, 2} {
		d := &Denoiser{Options: Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1, Group: 32, Threads: threads}}
		strips := tile.Plan(h, 16, d.StripGeometry(sigma))
		if len(strips) < 3 {
			t.Fatalf("%d strips, want at least 3", len(strips))
		}
		m, _, err := denoise.PrepareStrips(context.Background(), d, tiletest.Lines{Cube: noisy}, strips, sigma)
		if err != nil {
			t.Fatal(err)
		}
		prepared := m.(*Denoiser)
		checkPreparedEigenImages(t, prepared, tiletest.Lines{Cube: noisy}, strips, sigma, whole.K)
		got := msi.NewCube(h, w, bands)
		err = tile.Run(context.Background(), tiletest.Lines{Cube: noisy}, tiletest.Lines{Cube: got}, strips,
			func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
				out, res, err := prepared.Denoise(ctx, c, sigma)
				if err == nil && !slices.Contains(res.Settings, denoise.Param{Name: "eigen-images", Value: strconv.Itoa(whole.K)}) {
					t.Errorf("strip settings %v: want eigen-images=%d", res.Settings, whole.K)
				}
				return out, err
			}, nil)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, got)
		if threads > 1 {
			continue
		}
		wholeOut, _, err := d.Denoise(context.Background(), noisy, sigma)
		if err != nil {
			t.Fatal(err)
		}
		pw, ps := cubetest.PSNR(t, clean, wholeOut), cubetest.PSNR(t, clean, got)
		t.Logf("strips %.2f dB, whole cube %.2f dB", ps, pw)
		if noisyPSNR := cubetest.PSNR(t, clean, noisy); ps < pw-0.5 || ps-noisyPSNR < 10 {
			t.Errorf("strips %.2f dB, whole cube %.2f dB, noisy %.2f dB", ps, pw, noisyPSNR)
		}
	}
	if !slices.Equal(outs[0].Data, outs[1].Data) {
		t.Error("1 and 2 threads give different strips")
	}
}

// checkPreparedEigenImages checks that prepared, prepared for strips of
// the lines of r with noise sigma, works on k eigen-images, with the rank
// streamed from them, and that its Draft keeps them.
func checkPreparedEigenImages(t *testing.T, prepared *Denoiser, r tile.Reader, strips []tile.Strip, sigma float64, k int) {
	t.Helper()
	if prepared.basis == nil || prepared.basis.K != k {
		t.Fatalf("prepared basis %v, want %d eigen-images", prepared.basis, k)
	}
	h, w, _ := r.Size()
	rank, err := streamedEigenRank(context.Background(), r, strips, prepared.basis, (h/eigenBlock)*(w/eigenBlock), sigma, report.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if prepared.Options.Rank != rank {
		t.Errorf("prepared rank %d, streamed along the eigen-images' smoothed directions %d", prepared.Options.Rank, rank)
	}
	if draft := prepared.Draft().(*Denoiser); draft.basis != prepared.basis {
		t.Error("the draft does not keep the basis")
	}
}

// denoiseInStrips returns the cube noisy denoised by m strip by strip
// (tile.Run, as the pipeline runs strips), and the last strip's Result.
func denoiseInStrips(t *testing.T, m denoise.Method, noisy *msi.Cube, strips []tile.Strip, sigma float64) (*msi.Cube, denoise.Result) {
	t.Helper()
	out := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
	var last denoise.Result
	err := tile.Run(context.Background(), tile.Lines{Cube: noisy}, tile.Lines{Cube: out}, strips,
		func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
			x, res, err := m.Denoise(ctx, c, sigma)
			last = res
			return x, err
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out, last
}

// tallCube returns a height×24×8 cube cut from the committed balloons crop
// (its lines reflected at the crop's edges to reach the height), and the
// cube with Gaussian noise of σ (seed 1).
func tallCube(t *testing.T, height int, sigma float64) (clean, noisy *msi.Cube) {
	t.Helper()
	crop, err := formats.Open("../../../testdata/balloons_crop128")
	if err != nil {
		t.Fatal(err)
	}
	clean = msi.NewCube(height, 24, 8)
	for b := range clean.Bands {
		for y := range height {
			src := y % (2 * crop.Height)
			if src >= crop.Height {
				src = 2*crop.Height - 1 - src
			}
			for x := range clean.Width {
				clean.Set(y, x, b, crop.At(src, x, b))
			}
		}
	}
	return clean, noise.Add(nil, clean, sigma, 1)
}

// TestDenoiseInBlocks: a whole cube taller than blockLines lines comes
// out of Denoise bit for bit as from PrepareStrips and strips of
// blockLines lines (the pipeline's --tile), for 1 and 3 threads, and its
// Draft runs in blocks too; a cube of blockLines lines is denoised whole,
// as by the chain observed stage by stage (which never runs in blocks),
// and the taller cube's blocks differ from that chain.
func TestDenoiseInBlocks(t *testing.T) {
	const sigma = 30
	// Two blocks: 200 lines, above blockLines and below the 256 at which
	// cubes were once cut.
	_, noisy := tallCube(t, 200, sigma)
	opts := Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1, Group: 32}
	var wholes []*msi.Cube
	for _, threads := range []int{1, 3} {
		opts.Threads = threads
		d := &Denoiser{Options: opts}
		whole, res, err := d.Denoise(context.Background(), noisy, sigma)
		if err != nil {
			t.Fatal(err)
		}
		wholes = append(wholes, whole)
		strips := tile.Plan(noisy.Height, blockLines, d.StripGeometry(sigma))
		if len(strips) != 2 {
			t.Fatalf("%d strips of %d lines on %d lines, want 2", len(strips), blockLines, noisy.Height)
		}
		// Taller strips are planned as the blocks: one strip of the
		// whole cube would be denoised at once.
		if tall := tile.Plan(noisy.Height, noisy.Height, d.StripGeometry(sigma)); !slices.Equal(tall, strips) {
			t.Fatalf("strips of %d lines planned as %v, want the blocks %v", noisy.Height, tall, strips)
		}
		prepared, _, err := d.PrepareStrips(context.Background(), tile.Lines{Cube: noisy}, strips, sigma)
		if err != nil {
			t.Fatal(err)
		}
		stripsOut, stripRes := denoiseInStrips(t, prepared, noisy, strips, sigma)
		if !slices.Equal(whole.Data, stripsOut.Data) {
			t.Fatalf("%d threads: the whole cube's result is not the strips' (RMS difference %.3g)", threads, cubetest.RMSE(whole, stripsOut))
		}
		if !slices.Equal(res.Settings, stripRes.Settings) {
			t.Errorf("settings %v, the strips' %v", res.Settings, stripRes.Settings)
		}
	}
	if !slices.Equal(wholes[0].Data, wholes[1].Data) {
		t.Error("1 and 3 threads give different results")
	}
	observed := &Denoiser{Options: opts, afterStage: func(string, *msi.Cube, time.Duration) {}}
	chain, _, err := observed.Denoise(context.Background(), noisy, sigma)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(chain.Data, wholes[0].Data) {
		t.Error("the blocks' result is the whole cube's chain's: the blocks did not run")
	}

	// The draft of a whole run runs in blocks: the strips' draft.
	d := &Denoiser{Options: opts}
	draft, _, err := d.Draft().Denoise(context.Background(), noisy, sigma)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(draft.Data, wholes[0].Data) {
		t.Error("the draft (one Wiener pass, one round, as these options) differs from the blocks' run")
	}

	_, short := tallCube(t, blockLines, sigma)
	got, _, err := (&Denoiser{Options: opts}).Denoise(context.Background(), short, sigma)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := observed.Denoise(context.Background(), short, sigma)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Data, want.Data) {
		t.Errorf("a cube of %d lines is not denoised whole", blockLines)
	}
}

// TestPrepareStripsCounted: a Denoiser that counts its directions of
// signal (WithSignalDirections) keeps the count in strips: the prepared
// method chooses its rank from it, not from the streamed statistics.
func TestPrepareStripsCounted(t *testing.T) {
	const sigma = 30
	_, noisy := tallCube(t, 64, sigma)
	d := &Denoiser{Options: Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1, Group: 32}}
	counted := d.WithSignalDirections(7).(*Denoiser)
	strips := tile.Plan(noisy.Height, 16, d.StripGeometry(sigma))
	m, _, err := counted.PrepareStrips(context.Background(), tile.Lines{Cube: noisy}, strips, sigma)
	if err != nil {
		t.Fatal(err)
	}
	prepared := m.(*Denoiser)
	if !prepared.counted || prepared.signalDirections != 7 || prepared.Options.Rank != 0 {
		t.Fatalf("prepared: counted %v, %d directions, rank %d; want the count of 7 kept and no rank chosen",
			prepared.counted, prepared.signalDirections, prepared.Options.Rank)
	}
	_, res, err := prepared.Denoise(context.Background(), noisy.Crop(0, 0, 0, strips[0].Read.Len(), noisy.Width, noisy.Bands), sigma)
	if err != nil {
		t.Fatal(err)
	}
	if want := (denoise.Param{Name: "rank", Value: "7"}); !slices.Contains(res.Settings, want) {
		t.Errorf("settings %v, want %v", res.Settings, want)
	}
}
