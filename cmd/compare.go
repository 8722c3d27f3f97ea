package cmd

import (
	"fmt"
	"math"
	"slices"

	"github.com/spf13/cobra"

	"tdsc/internal/msi"
	"tdsc/internal/render"
)

func newCompareCmd() *cobra.Command {
	var (
		ref, out   string
		band       int
		wavelength float64
		force      bool
		cf         cubeFlags
	)
	c := &cobra.Command{
		Use:   "compare --ref CLEAN --out PICTURE.png INPUT...",
		Short: "Draw one band of the reference and the inputs side by side",
		Long: `compare writes a PNG with one band of the reference followed by the same band of
every input (e.g. clean | noisy | denoised), each under its path, all with one
intensity mapping: 0 is black and the reference's 99.5th percentile is white. The band is chosen by
--wavelength (nm, default 420 as in the paper's Fig. 4, when the wavelengths are
known) or by --band (1-based number).`,
		Example: "  tdsc compare --ref balloons_ms --out fig4.png noisy30.hdr denoised30",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, inputs []string) error {
			cf.start(cmd) // SIGINT and SIGTERM stop reading and writing cubes; reads are said on stderr
			if ref == "" || out == "" {
				return fmt.Errorf("--ref and --out are required")
			}
			if err := checkOutputFiles(force, out); err != nil {
				return err
			}
			clean, err := cf.open(ref)
			if err != nil {
				return flagError(err)
			}
			b, err := pickBand(clean, band, wavelength, cmd.Flags().Changed("band"))
			if err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
			panels := [][]float64{clean.Band(b)}
			for _, in := range inputs {
				x, err := cf.openLike(in, clean, ref)
				if err != nil {
					return flagError(err)
				}
				if !x.SameSize(clean) {
					return fmt.Errorf("%s is %s but the reference %s is %s", in, x.Size(), ref, clean.Size())
				}
				// A copy of the band, so that the cube is freed before the
				// next is read.
				panels = append(panels, slices.Clone(x.Band(b)))
			}
			labels := append([]string{ref}, inputs...)
			if err := render.WritePNG(out, render.SideBySide(panels, labels, clean.Height, clean.Width), force); err != nil {
				return err
			}
			label := fmt.Sprintf("band %d", b+1)
			if b < len(clean.Wavelengths) {
				label += fmt.Sprintf(" (%g nm)", clean.Wavelengths[b])
			}
			newReporter(cmd).Logf("wrote %s: %s of %d cubes side by side", out, label, len(panels))
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&ref, "ref", "r", "", "reference cube, drawn first")
	f.StringVarP(&out, "out", "o", "", "PNG to write")
	f.IntVar(&band, "band", 0, "1-based band number to draw")
	f.Float64Var(&wavelength, "wavelength", 420, "wavelength in nm of the band to draw (the nearest band)")
	f.BoolVar(&force, "force", false, "overwrite an existing picture")
	cf.register(c, false)
	cf.registerMemory(f, picturePeak)
	excludeEachOther(c, "band", "wavelength")
	return c
}

// pickBand returns the 0-based band to draw: --band when given, else the
// band nearest to the wavelength when the wavelengths are known, else the
// first band.
func pickBand(c *msi.Cube, band int, wavelength float64, byNumber bool) (int, error) {
	if byNumber {
		if band < 1 || band > c.Bands {
			return 0, fmt.Errorf("--band %d is not a band: the cube has bands 1..%d", band, c.Bands)
		}
		return band - 1, nil
	}
	if len(c.Wavelengths) != c.Bands {
		return 0, nil
	}
	best := 0
	for b, w := range c.Wavelengths {
		if math.Abs(w-wavelength) < math.Abs(c.Wavelengths[best]-wavelength) {
			best = b
		}
	}
	if d := math.Abs(c.Wavelengths[best] - wavelength); d > 10 {
		return 0, fmt.Errorf("no band near %g nm: the nearest is %g nm", wavelength, c.Wavelengths[best])
	}
	return best, nil
}

// picturePeak is the peak memory of tdsc compare and tdsc inspect, in
// bytes a voxel of a cube they read: two cubes as float64 at a time (the
// reference or noisy one and one input) and the files' bytes as read.
// Measured by scripts/memory.sh on a 512×512×31 cube (docs/results.md):
// 24.4 for both, rounded up.
const picturePeak = 25
