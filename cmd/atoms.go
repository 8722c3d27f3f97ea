package cmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"tdsc/internal/denoise"
	"tdsc/internal/gray"
	"tdsc/internal/render"
)

// atomsTileSize is the side, in screen pixels, that an atom of the picture
// is magnified to at least (by an integer factor).
const atomsTileSize = 96

func newAtomsCmd() *cobra.Command {
	var (
		modelName, out, dict string
		d                    int
		force                bool
		o                    gray.AtomsOptions
	)
	c := &cobra.Command{
		Use:   "atoms --atoms-png ATOMS.png --save-dict DICT.json [flags] IMAGE|FOLDER...",
		Short: "Learn a dictionary of d×d grayscale image patches and draw its atoms",
		Long: `atoms learns a dictionary from --samples d×d patches drawn at random (seeded, every
window position of every image equally likely) from grayscale images, and draws its
atoms (the paper's Fig. 5). The inputs are PNG files or folders of them (all the PNGs
of a folder, such as the bands of a CAVE band stack). Grayscale PNGs (8 or 16 bits)
are read as they are; colour PNGs are refused unless --luminance converts them to
0.299·R + 0.587·G + 0.114·B.

Scale: pixels are on [0, 1] (8-bit values / 255, 16-bit values / 65535) — not the
[0, 255] of the other commands — the scale that the paper's β = 0.1 presumably
refers to. Every patch has its mean removed.

--whiten first whitens every whole image, as the sparse-coding literature prepares
natural images (Olshausen & Field 1996; Lee, Battle, Raina, Ng 2006): its 2-D DFT
is multiplied by the zero-phase filter R(f) = f·exp(−(f/f0)⁴), f the radial spatial
frequency in cycles per pixel (√(fx² + fy²), each of |fx|, |fy| ≤ 0.5) and
f0 = 0.4 cycles per pixel (0.8 of Nyquist); the result (zero mean, as R(0) = 0) is
divided by its standard deviation over the image. The factor f flattens the 1/f
amplitude spectrum of natural images; the roll-off spares the noisiest frequencies
near Nyquist. Patches are then on the unit-variance scale of the whitened images,
and β refers to that scale. The DFT wraps the image around, so pixels within a few
of the border see the opposite border.

--model 2dsc codes each patch as a d×1×d tensor (rows on mode 1, columns on
mode 3): an atom is d×1×d, and the t-product combines its circular shifts along the
columns. --model sc codes each patch as a d²-vector (the same solver with k = 1):
ordinary sparse coding. Both minimise ½‖X − D*B‖² + β‖B‖₁ with unit-norm atoms,
alternating FISTA coding (--inner-iters) and the Lagrange-dual dictionary update
for exactly --iters iterations.

--atoms-png receives the atoms as one PNG grid, each atom a d×d image contrast-normalised
on its own (minimum black, maximum white), ordered by use (ℓ1 norm of its codes
over the samples, largest first); --save-dict the dictionary file. stdout gets one line
with the model, sizes, final objective and times. The defaults are the settings of
scripts/fig5.sh at d = 16.`,
		Example: `  tdsc atoms --model 2dsc --patch 32 --atoms-png atoms2dsc32.png --save-dict atoms2dsc32.json \
      $TDSC_DATA/cave/balloons_ms/balloons_ms/balloons_ms_16.png`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" || dict == "" {
				return errors.New("--atoms-png and --save-dict are required")
			}
			if len(args) == 0 {
				return errors.New("no input images: give PNG files or folders of them")
			}
			model, err := gray.ParseModel(modelName)
			if err != nil {
				return fmt.Errorf("--model: %v", err)
			}
			o.Layout = gray.Layout{Model: model, D: d}
			if err := o.Validate(); err != nil {
				return flagError(err)
			}
			if err := checkOutputFiles(force, out, dict); err != nil {
				return err
			}
			files, err := gray.Files(args)
			if err != nil {
				return err
			}
			log := newReporter(cmd)
			var note string
			if o.Learn.Threads, note = denoise.ClampThreads(o.Learn.Threads); note != "" {
				log.Logf("%s", note)
			}
			phase := ""
			o.ReadProgress = func(done, total int) {
				if phase == "" {
					log.Start("reading images", "images", int64(total))
					phase = "reading"
				}
				log.Update(int64(done), "")
			}
			o.Learn.Progress = func(iter int, obj float64) {
				if phase != "learning" {
					log.Finish()
					m, k := o.Dims()
					log.Logf("%d patches of %d×%d pixels from %d %simages; %s atoms are %d×1×%d", o.Samples, d, d, len(files), whitenedText(o.Whiten), model, m, k)
					log.Start("learning", "iterations", int64(o.Learn.Iters))
					phase = "learning"
				}
				log.Update(int64(iter), fmt.Sprintf("objective %.6g", obj))
			}
			res, err := gray.Atoms(cmd.Context(), files, o, "tdsc "+version)
			log.Finish()
			if errors.Is(err, gray.ErrFlat) {
				return fmt.Errorf("%w (--whiten needs images that are not constant)", err)
			} else if errors.Is(err, gray.ErrColour) {
				return fmt.Errorf("%w (give --luminance to convert colour images)", err)
			} else if err != nil {
				return err
			}
			scale := max(1, (atomsTileSize+d-1)/d)
			if err := render.WritePNG(out, render.AtomGrid(res.Tiles, d, d, scale), force); err != nil {
				return err
			}
			if err := res.Model.WriteFile(dict, force); err != nil {
				os.Remove(out)
				return err
			}
			log.Logf("wrote %s and %s", out, dict)
			obj := res.Model.Objective
			fmt.Fprintf(cmd.OutOrStdout(), "%s d=%d atoms=%d samples=%d whiten=%t beta=%g iterations=%d objective=%.6g reading=%.1fs learning=%.1fs\n",
				model, d, o.Learn.Atoms, o.Samples, o.Whiten, o.Learn.Beta, res.Model.Iterations, obj[len(obj)-1],
				res.ReadTime.Seconds(), res.LearnTime.Seconds())
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&modelName, "model", "2dsc", "2dsc (patch = d×1×d tensor, t-product) or sc (patch = d²-vector)")
	fixedValues(c, "model", gray.ModelNames)
	f.IntVar(&d, "patch", 16, "patch side d in pixels (≥ 2)")
	f.IntVar(&o.Learn.Atoms, "atoms", 64, "number of dictionary atoms")
	f.Float64Var(&o.Learn.Beta, "beta", 0.1, "ℓ1 weight β, for pixels on [0, 1] (unit variance with --whiten)")
	f.IntVar(&o.Samples, "samples", 10000, "training patches drawn at random from the images")
	f.IntVar(&o.Learn.Iters, "iters", 30, "outer learning iterations")
	f.IntVar(&o.Learn.InnerIters, "inner-iters", 20, "FISTA iterations per outer iteration")
	f.Uint64Var(&o.Learn.Seed, "seed", 1, "seed of the patch sample and the initial dictionary")
	f.IntVar(&o.Learn.Threads, "threads", 0, "worker goroutines (default: all cores); the output does not depend on it")
	f.BoolVar(&o.Luminance, "luminance", false, "convert colour images to luminance (BT.601) instead of refusing them")
	f.BoolVar(&o.Whiten, "whiten", false, "whiten every image first: 2-D DFT × f·exp(−(f/0.4)⁴), f in cycles/pixel, then unit variance")
	f.StringVar(&out, "atoms-png", "", "PNG to draw the atoms into")
	f.StringVar(&dict, "save-dict", "", "dictionary file to write (JSON)")
	deprecatedSpelling(f, "out", "o", "atoms-png")
	deprecatedSpelling(f, "dict", "", "save-dict")
	f.BoolVar(&force, "force", false, "overwrite existing outputs")
	return c
}

// whitenedText is the word for whitened images in the log, if they are.
func whitenedText(whiten bool) string {
	if whiten {
		return "whitened "
	}
	return ""
}
