package cmd

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"tdsc/internal/gray"
	"tdsc/internal/render"
	"tdsc/internal/tsc"
)

// atomsTileSize is the side, in screen pixels, that an atom of the picture
// is magnified to at least (by an integer factor).
const atomsTileSize = 96

func newAtomsCmd() *cobra.Command {
	var (
		modelName, out, dict string
		d, samples, threads  int
		luminance, force     bool
		whiten               bool
		opt                  tsc.LearnOptions
	)
	c := &cobra.Command{
		Use:   "atoms --out ATOMS.png --dict DICT.json [flags] IMAGE|FOLDER...",
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

--out receives the atoms as one PNG grid, each atom a d×d image contrast-normalised
on its own (minimum black, maximum white), ordered by use (ℓ1 norm of its codes
over the samples, largest first); --dict the dictionary file. stdout gets one line
with the model, sizes, final objective and times. The defaults are the settings of
scripts/fig5.sh at d = 16.`,
		Example: `  tdsc atoms --model 2dsc --patch 32 --out atoms2dsc32.png --dict atoms2dsc32.json \
      $TDSC_DATA/cave/balloons_ms/balloons_ms/balloons_ms_16.png`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" || dict == "" {
				return errors.New("--out and --dict are required")
			}
			if len(args) == 0 {
				return errors.New("no input images: give PNG files or folders of them")
			}
			model, err := gray.ParseModel(modelName)
			if err != nil {
				return fmt.Errorf("--model: %v", err)
			}
			switch {
			case d < 2:
				return fmt.Errorf("--patch must be at least 2, got %d", d)
			case opt.Atoms < 1:
				return fmt.Errorf("--atoms must be at least 1, got %d", opt.Atoms)
			case samples < 1:
				return fmt.Errorf("--samples must be at least 1, got %d", samples)
			case samples < opt.Atoms:
				return fmt.Errorf("--samples (%d) must be at least --atoms (%d): the atoms start as samples", samples, opt.Atoms)
			case !(opt.Beta >= 0) || math.IsInf(opt.Beta, 0):
				return fmt.Errorf("--beta must be a finite number ≥ 0, got %v", opt.Beta)
			case opt.Iters < 1 || opt.InnerIters < 1:
				return fmt.Errorf("--iters and --inner-iters must be at least 1, got %d and %d", opt.Iters, opt.InnerIters)
			case threads < 0:
				return fmt.Errorf("--threads must be ≥ 0, got %d", threads)
			}
			if err := refuseExisting(force, out, dict); err != nil {
				return err
			}
			files, err := gray.Files(args)
			if err != nil {
				return err
			}
			layout := gray.Layout{Model: model, D: d}
			log := newReporter(cmd)

			t0 := time.Now()
			started := false
			x, err := gray.Sample(files, layout, gray.SampleOptions{
				Samples: samples, Seed: opt.Seed, Luminance: luminance, Whiten: whiten,
				Progress: func(done, total int) {
					if !started {
						log.Start("reading images", "images", int64(total))
						started = true
					}
					log.Update(int64(done), "")
				},
			})
			log.Finish()
			if errors.Is(err, gray.ErrFlat) {
				return fmt.Errorf("%w (--whiten needs images that are not constant)", err)
			} else if errors.Is(err, gray.ErrColour) {
				return fmt.Errorf("%w (give --luminance to convert colour images)", err)
			} else if err != nil {
				return err
			}
			readTime := time.Since(t0)
			m, k := layout.Dims()
			log.Logf("%d patches of %d×%d pixels from %d %simages; %s atoms are %d×1×%d", samples, d, d, len(files), whitenedText(whiten), model, m, k)

			t1 := time.Now()
			opt.Threads = threads
			log.Start("learning", "iterations", int64(opt.Iters))
			opt.Progress = func(iter int, obj float64) {
				log.Update(int64(iter), fmt.Sprintf("objective %.6g", obj))
			}
			res, err := tsc.LearnContext(cmd.Context(), x, opt)
			log.Finish()
			if err != nil {
				return err
			}
			learnTime := time.Since(t1)

			shape := layout.Shape()
			mdl := &tsc.Model{
				Description: fmt.Sprintf("%s dictionary of %d×%d grayscale image patches (%s, patch means removed): %s",
					model, d, d, scaleText(whiten), layoutText(model)),
				CreatedBy:  "tdsc " + version,
				Patch:      shape,
				Beta:       opt.Beta,
				Seed:       opt.Seed,
				Iterations: res.Iterations,
				Objective:  res.Objective,
				Atoms:      res.Dict,
			}
			scale := max(1, (atomsTileSize+d-1)/d)
			if err := render.WritePNG(out, render.AtomGrid(atomTiles(layout, res), d, d, scale), force); err != nil {
				return err
			}
			if err := mdl.WriteFile(dict, force); err != nil {
				os.Remove(out)
				return err
			}
			log.Logf("wrote %s and %s", out, dict)
			fmt.Fprintf(cmd.OutOrStdout(), "%s d=%d atoms=%d samples=%d whiten=%t beta=%g iterations=%d objective=%.6g reading=%.1fs learning=%.1fs\n",
				model, d, opt.Atoms, samples, whiten, opt.Beta, res.Iterations, res.Objective[len(res.Objective)-1],
				readTime.Seconds(), learnTime.Seconds())
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&modelName, "model", "2dsc", "2dsc (patch = d×1×d tensor, t-product) or sc (patch = d²-vector)")
	f.IntVar(&d, "patch", 16, "patch side d in pixels (≥ 2)")
	f.IntVar(&opt.Atoms, "atoms", 64, "number of dictionary atoms")
	f.Float64Var(&opt.Beta, "beta", 0.1, "ℓ1 weight β, for pixels on [0, 1] (unit variance with --whiten)")
	f.IntVar(&samples, "samples", 10000, "training patches drawn at random from the images")
	f.IntVar(&opt.Iters, "iters", 30, "outer learning iterations")
	f.IntVar(&opt.InnerIters, "inner-iters", 20, "FISTA iterations per outer iteration")
	f.Uint64Var(&opt.Seed, "seed", 1, "seed of the patch sample and the initial dictionary")
	f.IntVar(&threads, "threads", 0, "worker goroutines (default: all cores); the output does not depend on it")
	f.BoolVar(&luminance, "luminance", false, "convert colour images to luminance (BT.601) instead of refusing them")
	f.BoolVar(&whiten, "whiten", false, "whiten every image first: 2-D DFT × f·exp(−(f/0.4)⁴), f in cycles/pixel, then unit variance")
	f.StringVarP(&out, "out", "o", "", "PNG to draw the atoms into")
	f.StringVar(&dict, "dict", "", "dictionary file to write (JSON)")
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

// scaleText says in a dictionary file what scale its patches were on.
func scaleText(whiten bool) string {
	if whiten {
		return fmt.Sprintf("images whitened by the zero-phase filter f·exp(−(f/%g)⁴), f in cycles per pixel, then scaled to unit variance", gray.WhitenF0)
	}
	return "pixels on [0, 1]"
}

// layoutText says how the atoms of a dictionary file map to image patches.
func layoutText(m gray.Model) string {
	if m == gray.Vector {
		return "atom j is the row-major d²-vector of a d×d patch (m = d², k = 1: ordinary sparse coding)"
	}
	return "atom j is the d×1×d tensor whose element (i, t) is pixel (row i, column t) of a d×d patch " +
		"(in the file, the k \"bands\" are the d columns); the t-product shifts it circularly along the columns"
}

// atomTiles returns every atom as a d×d row-major image, ordered by the ℓ1
// norm of its codes over the training patches, largest first (ties by
// atom number).
func atomTiles(l gray.Layout, res *tsc.LearnResult) [][]float64 {
	b := res.Codes // R×N×K: B(q, j, t) at (j*K+t)*R+q
	use := make([]float64, b.M)
	for i, v := range b.Data {
		use[i%b.M] += math.Abs(v)
	}
	order := make([]int, b.M)
	for q := range order {
		order[q] = q
	}
	slices.SortStableFunc(order, func(p, q int) int {
		switch {
		case use[p] > use[q]:
			return -1
		case use[p] < use[q]:
			return 1
		}
		return 0
	})
	tiles := make([][]float64, len(order))
	for i, q := range order {
		tiles[i] = l.Unpack(res.Dict.Lateral(q))
	}
	return tiles
}
