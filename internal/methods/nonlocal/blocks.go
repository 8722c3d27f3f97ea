package nonlocal

import (
	"context"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/report"
	"tdsc/internal/tile"
)

// A cube taller than blockLines lines is denoised in blocks of blockLines
// lines, exactly as in strips of that many lines (package tile, --tile
// blockLines): what the strips share learned once from the whole cube
// (PrepareStrips: on many bands the eigen-images' basis, the pilot's
// dictionary from the whole cube's sample, the rank), then every block
// with its halo (StripGeometry) denoised on its own, its core kept.
//
// Why: the Wiener and low-rank stages fit their spectral subspaces (the
// Wiener pass's leading directions, the low-rank rounds' basis) on the
// cube they are given, and a subspace fitted on 128 lines and its halo
// follows the materials of those lines where one fitted on the whole
// scene averages over all of them. On the four full CAVE scenes
// (512×512×31) at σ = 10, 30 and 50 strips of 128 lines were 0.01–0.38
// dB above the chain run on the whole cube at once (0.18 on average, the
// SSIM within 0.002), never below it (docs/results.md, "Cubes larger
// than memory: strips"): a whole run now gives the strips' result. The
// halo costs its share of time: 608 lines denoised for the 512 of a full
// CAVE scene.
//
// A repair's passes on eigen-images run in blocks too, their low-rank
// rounds in the spectra fitted on the whole cube (roundSpectra): with
// each block's own (bandPilot's on 160 lines) the blocks had cost them
// 0.3–0.8 dB against one run on the whole cube, on cubes of 224 bands
// with QRNN3D's case 5; with the whole cube's spectra the blocks are
// ahead of that run again (docs/results.md, "The rounds of a repair's
// passes in the whole cube's spectra"). The last pass's blocks fit them
// on their pilot and the repair's statistics of the whole cube together,
// as its strips do (stripSpectra, PrepareRepair's repairLater): the whole
// runs of three cubes of 224 bands and 512 or 1024 lines gained
// 0.15–0.21 dB (docs/results.md, "The rounds of a repair's last pass in
// strips").
//
// Cubes of 129 to 256 lines, two blocks, used to be denoised at once, as
// a cube cut in two seemed no local model. Measured on fifteen of them
// (Indian Pines with QRNN3D's cases 2–5; 256×256 crops of the CAVE
// scenes at 31 and 224 bands with Gaussian, Poisson-Gaussian and mixed
// noise), two blocks moved the whole run by −0.15 to +0.85 dB, +0.20 on
// average and up on 13 of them, for 1.06–1.23 times the CPU; and the
// strips of those cubes came closer to the whole run, within 0.1 dB on
// 10 of them where 5 were, the largest gap 0.45 dB where it was 0.70
// (docs/results.md, "Cubes of two blocks: in blocks too"). A cube of at
// most blockLines lines, one block, is denoised at once.
const blockLines = 128

// inBlocks says whether Denoise runs on a cube of the given height in
// line blocks: a whole cube (not a strip of PrepareStrips') taller than
// blockLines, unless the stages' estimates are observed (afterStage,
// BenchmarkStages: the chain of the whole cube, stage by stage).
func (d *Denoiser) inBlocks(height int) bool {
	return d.pilot == nil && d.afterStage == nil && height > blockLines
}

// denoiseBlocks denoises noisy with noise σ in line blocks (blockLines):
// PrepareStrips on the cube in memory, then every block as tile.Run runs
// a strip, the cores joined into the result. The Result is the last
// block's (the settings every block shares).
func (d *Denoiser) denoiseBlocks(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	log := report.OrDiscard(d.Report)
	geom := d.StripGeometry(sigma)
	strips := tile.Plan(noisy.Height, blockLines, geom)
	in := tile.Lines{Cube: noisy}
	prepared, _, err := d.PrepareStrips(ctx, in, strips, sigma)
	if err != nil {
		return nil, denoise.Result{}, err
	}
	log.Logf("denoising in %d blocks of %d lines (halo %d), each fitting its own spectral subspaces", len(strips), blockLines, geom.Halo)
	out := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
	var res denoise.Result
	report.StartSteps(log, "denoising blocks", "blocks", int64(len(strips)))
	err = tile.Run(ctx, in, tile.Lines{Cube: out}, strips, func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
		x, r, err := prepared.Denoise(ctx, c, sigma)
		res = r
		return x, err
	}, func(done, _ int) { log.Update(int64(done), "") })
	log.Finish()
	if err != nil {
		return nil, denoise.Result{}, err
	}
	out.Wavelengths = noisy.Wavelengths
	return out, res, nil
}
