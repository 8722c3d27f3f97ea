package cmd

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"tdsc/internal/metrics/noref"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/parallel"
	"tdsc/internal/render"
)

// nlfDefaultBands is the most bands nlf draws without --band: a cube with
// more has that many drawn, evenly spaced.
const nlfDefaultBands = 16

func newNLFCmd() *cobra.Command {
	var (
		out   string
		bands []int
		force bool
		cf    cubeFlags
	)
	c := &cobra.Command{
		Use:   "nlf --out PICTURE.png [--band N]... CUBE",
		Short: "Draw the noise-level function of a cube's bands: local noise variance against local mean, and the fitted σ²(x) = a·x + b",
		Long: `nlf fits the noise-level function of every band of CUBE, its noise variance at a
clean value x on the working [0, 255] scale, σ²(x) = a·x + b (a > 0: the noise grows
with the signal, as a photon-counting sensor's does; a = 0: i.i.d. Gaussian noise),
decides whether the noise is signal-dependent, as eval --noref does, says both on
stderr and writes a PNG of the model: for each band, the noise variance of levels
of smooth 4×4 windows of equal count against their mean (blue squares; gray for
levels left out because they lie near a clipping level) and the fitted line
(orange), the vertical axis from 0. A band with too few smooth windows to fit (most
of it impulses, say) says so and is given its nearest fitted band's function.

The bands are chosen by --band (1-based, repeatable or comma-separated); by
default every band of a cube of up to 16 bands, else 16 bands evenly spaced from
the first to the last.`,
		Example: "  tdsc nlf --out nlf.png scene.hdr\n  tdsc nlf --band 5,12 --out nlf.png scene.hdr",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cf.start(cmd) // SIGINT and SIGTERM stop reading and writing cubes; reads are said on stderr
			if out == "" {
				return fmt.Errorf("--out is required")
			}
			if !strings.EqualFold(filepath.Ext(out), ".png") {
				return fmt.Errorf("--out %s: nlf writes a PNG; give a name ending in .png", out)
			}
			if err := checkOutputFiles(force, out); err != nil {
				return err
			}
			c, err := cf.open(args[0])
			if err != nil {
				return flagError(err)
			}
			chosen, err := nlfBands(c, bands)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			rep, err := parallel.Interruptible(cf.ctx, func() (*noref.Report, error) { return noref.Assess(c, nil, noise.MAD) })
			if err != nil {
				return err
			}
			nl := rep.NoiseLevel
			log := newReporter(cmd)
			log.Logf("%s", nl.Summary())
			heading := []string{
				fmt.Sprintf("%s: %s noise (signal-dependent when slope z > 5 and bright/dark variance >= 1.2: here z %.1f over the bands, ratio %.2f, median)",
					filepath.Base(args[0]), rep.NoiseModel(), nl.Z, nl.Ratio),
				"noise variance of levels of smooth 4x4 windows against their mean (gray: near clipping) and the fit var(x) = a*x + b",
			}
			panels := make([]render.NoiseLevelPanel, len(chosen))
			for i, b := range chosen {
				panels[i] = render.NoiseLevelPanel{Name: bandName(c, b), Fit: nl.Bands[b], Function: nl.Functions[b]}
			}
			if err := render.WritePNG(out, render.NoiseLevels(heading, panels), force); err != nil {
				return err
			}
			log.Logf("wrote %s: the noise-level function of %d of %d bands", out, len(chosen), c.Bands)
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&out, "out", "o", "", "PNG to write")
	f.IntSliceVar(&bands, "band", nil, "1-based band number to draw; repeatable or comma-separated (default: every band up to 16, else 16 evenly spaced)")
	f.BoolVar(&force, "force", false, "overwrite an existing picture")
	cf.register(c, false)
	return c
}

// nlfBands returns the 0-based bands nlf draws: the 1-based numbers given,
// in their order, or by default every band of c up to nlfDefaultBands,
// else that many evenly spaced from the first to the last.
func nlfBands(c *msi.Cube, given []int) ([]int, error) {
	var out []int
	for _, b := range given {
		if b < 1 || b > c.Bands {
			return nil, fmt.Errorf("--band %d is not a band: the cube has bands 1..%d", b, c.Bands)
		}
		out = append(out, b-1)
	}
	if len(out) > 0 {
		return out, nil
	}
	n := min(c.Bands, nlfDefaultBands)
	for i := range n {
		if n == 1 {
			return []int{0}, nil
		}
		out = append(out, i*(c.Bands-1)/(n-1))
	}
	return out, nil
}
