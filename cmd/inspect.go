package cmd

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"tdsc/internal/metrics/noref"
	"tdsc/internal/msi"
	"tdsc/internal/render"
)

func newInspectCmd() *cobra.Command {
	var (
		noisyPath, residualPath, ref, out string
		band                              int
		wavelength                        float64
		pixels                            []string
		force                             bool
		cf                                cubeFlags
	)
	c := &cobra.Command{
		Use:   "inspect --noisy NOISY --out PICTURE.png DENOISED",
		Short: "Draw what denoising removed: one band noisy | denoised | removed, and pixel spectra",
		Long: `inspect writes a PNG that shows what a denoiser did to a cube. At the top, one band
side by side: noisy | denoised | removed. Noisy and denoised share one intensity
mapping (the denoised band's 0.5th percentile black, its 99.5th white); the removed
part (NOISY − DENOISED, or the cube --residual names, such as denoise
--save-residual writes) is drawn around 0: 0 mid gray, ±3 of its robust standard
deviations (1.4826 × median |removed|) white and black. Removed noise looks like
even gray grain; removed stripes, dead columns and impulses show as full black or
white columns and dots; edges and texture in it are image that was removed too.
Missing voxels (no data) are magenta. The mappings are written under the bands;
bands smaller than 200 pixels are magnified by whole pixels.

Below, for each chosen pixel (--pixel ROW,COLUMN, 1-based, repeatable; by default
the centre and the centres of the four quadrants, marked and numbered on the
bands), a line plot of its spectrum in NOISY (gray) and DENOISED (blue) and, with
--ref, in the clean reference (orange), over the wavelengths in nm when NOISY
records them, else over the band numbers. Last, the power spectrum (Welch, in dB)
of the removed part's column means over cycles per column, with its strongest
period in columns: white noise gives a flat line and no period; a push-broom
sensor's detector striping gives peaks at the multiples of one over its period
(as eval --noref --noisy reports it; bands of fewer than 32 columns have none).

The band is chosen by --band (1-based number) or --wavelength (nm; the nearest
band); by default the band nearest 420 nm when NOISY records wavelengths and has a
band within 10 nm of it, else the middle band.`,
		Example: "  tdsc inspect --noisy scene.hdr --out inspect.png denoised.hdr\n" +
			"  tdsc inspect --noisy noisy30.hdr --ref balloons_ms --band 12 --pixel 100,200 --pixel 300,40 --out px.png denoised30.hdr",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cf.start(cmd) // SIGINT and SIGTERM stop reading and writing cubes; reads are said on stderr
			denoisedPath := args[0]
			if noisyPath == "" || out == "" {
				return fmt.Errorf("--noisy and --out are required")
			}
			if !strings.EqualFold(filepath.Ext(out), ".png") {
				return fmt.Errorf("--out %s: inspect writes a PNG; give a name ending in .png", out)
			}
			if err := checkOutputFiles(force, out); err != nil {
				return err
			}
			noisy, err := cf.open(noisyPath)
			if err != nil {
				return flagError(err)
			}
			flags := cmd.Flags()
			b, err := inspectBand(noisy, band, wavelength, flags.Changed("band"), flags.Changed("wavelength"))
			if err != nil {
				return fmt.Errorf("%s: %w", noisyPath, err)
			}
			points, err := parsePixels(pixels, noisy.Height, noisy.Width)
			if err != nil {
				return err
			}
			openSame := func(path, what string) (*msi.Cube, error) {
				x, err := cf.openLike(path, noisy, noisyPath)
				if err != nil {
					return nil, flagError(err)
				}
				if !x.SameSize(noisy) {
					return nil, fmt.Errorf("%s %s is %s but the noisy cube %s is %s", what, path, x.Size(), noisyPath, noisy.Size())
				}
				return x, nil
			}
			denoised, err := openSame(denoisedPath, "the denoised cube")
			if err != nil {
				return err
			}
			var removed []float64
			if residualPath != "" {
				r, err := openSame(residualPath, "--residual")
				if err != nil {
					return err
				}
				removed = r.Band(b)
			} else {
				nb, db := noisy.Band(b), denoised.Band(b)
				removed = make([]float64, len(nb))
				for i := range nb {
					removed[i] = nb[i] - db[i]
				}
			}
			var clean *msi.Cube
			if ref != "" {
				if clean, err = openSame(ref, "--ref"); err != nil {
					return err
				}
			}
			in := &render.Inspection{
				Height: noisy.Height, Width: noisy.Width, Band: bandName(noisy, b),
				Noisy: noisy.Band(b), Denoised: denoised.Band(b), Removed: removed,
			}
			in.RemovedColumns = noref.ColumnMeanSpectrum(removed, noisy.Height, noisy.Width)
			in.X, in.XName = spectrumAxis(noisy)
			for _, p := range points {
				s := render.PixelSpectra{Row: p[0], Column: p[1], Noisy: spectrum(noisy, p[0], p[1]), Denoised: spectrum(denoised, p[0], p[1])}
				if clean != nil {
					s.Reference = spectrum(clean, p[0], p[1])
				}
				in.Pixels = append(in.Pixels, s)
			}
			if err := render.WritePNG(out, render.Inspect(in), force); err != nil {
				return err
			}
			plural := "s"
			if len(points) == 1 {
				plural = ""
			}
			columns := ""
			if s := in.RemovedColumns; s != nil && math.IsNaN(s.Period) {
				columns = ", the removed column means' spectrum (no period)"
			} else if s != nil {
				columns = fmt.Sprintf(", the removed column means' spectrum (period %g)", s.Period)
			}
			newReporter(cmd).Logf("wrote %s: %s noisy | denoised | removed, spectra of %d pixel%s%s", out, in.Band, len(points), plural, columns)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&noisyPath, "noisy", "", pathHelp("the noisy cube that DENOISED was denoised from"))
	f.StringVar(&residualPath, "residual", "", "cube of the removed part to draw (e.g. from denoise --save-residual; default NOISY − DENOISED)")
	f.StringVarP(&ref, "ref", "r", "", "clean reference cube: its spectra are plotted too")
	f.StringVarP(&out, "out", "o", "", "PNG to write")
	f.IntVar(&band, "band", 0, "1-based band number to draw")
	f.Float64Var(&wavelength, "wavelength", 420, "wavelength in nm of the band to draw (the nearest band)")
	f.StringArrayVar(&pixels, "pixel", nil, "ROW,COLUMN (1-based) of a pixel whose spectra to plot; repeatable (default: the centre and the four quadrant centres)")
	f.BoolVar(&force, "force", false, "overwrite an existing picture")
	cf.register(c, false)
	cf.peak = picturePeak
	excludeEachOther(c, "band", "wavelength")
	return c
}

// inspectBand returns the 0-based band inspect draws: as compare's
// pickBand when --band or --wavelength is given; by default the band
// nearest 420 nm when the cube has one within 10 nm, else the middle band.
func inspectBand(c *msi.Cube, band int, wavelength float64, byNumber, byWavelength bool) (int, error) {
	if byNumber || byWavelength {
		return pickBand(c, band, wavelength, byNumber)
	}
	if len(c.Wavelengths) == c.Bands {
		if b, err := pickBand(c, 0, wavelength, false); err == nil {
			return b, nil
		}
	}
	return c.Bands / 2, nil
}

// bandName names band b (0-based) of c in a picture (ASCII).
func bandName(c *msi.Cube, b int) string {
	if len(c.Wavelengths) == c.Bands {
		return fmt.Sprintf("band %d (%g nm)", b+1, c.Wavelengths[b])
	}
	return fmt.Sprintf("band %d", b+1)
}

// spectrumAxis returns the positions of c's bands on a spectrum plot's
// horizontal axis and its name: the wavelengths when c records them in
// increasing order, else the 1-based band numbers.
func spectrumAxis(c *msi.Cube) ([]float64, string) {
	if len(c.Wavelengths) == c.Bands && c.Bands > 1 {
		increasing := true
		for b := 1; b < c.Bands; b++ {
			increasing = increasing && c.Wavelengths[b] > c.Wavelengths[b-1]
		}
		if increasing {
			return append([]float64(nil), c.Wavelengths...), "wavelength (nm)"
		}
	}
	x := make([]float64, c.Bands)
	for b := range x {
		x[b] = float64(b + 1)
	}
	return x, "band"
}

// spectrum returns the values of the pixel (y, x) in every band of c.
func spectrum(c *msi.Cube, y, x int) []float64 {
	s := make([]float64, c.Bands)
	for b := range s {
		s[b] = c.At(y, x, b)
	}
	return s
}

// parsePixels reads --pixel values ROW,COLUMN (1-based) into 0-based
// (row, column) pairs inside an h×w cube. Without any, it returns the
// centre and the centres of the four quadrants (without repeats, which a
// tiny cube has).
func parsePixels(values []string, h, w int) ([][2]int, error) {
	var out [][2]int
	if len(values) == 0 {
		for _, p := range [][2]int{{2, 2}, {1, 1}, {1, 3}, {3, 1}, {3, 3}} {
			q := [2]int{p[0] * h / 4, p[1] * w / 4}
			seen := false
			for _, o := range out {
				seen = seen || o == q
			}
			if !seen {
				out = append(out, q)
			}
		}
		return out, nil
	}
	for _, v := range values {
		ys, xs, ok := strings.Cut(v, ",")
		y, errY := strconv.Atoi(strings.TrimSpace(ys))
		x, errX := strconv.Atoi(strings.TrimSpace(xs))
		if !ok || errY != nil || errX != nil {
			return nil, fmt.Errorf("--pixel %q: want ROW,COLUMN (1-based numbers), e.g. --pixel 50,60", v)
		}
		if y < 1 || y > h || x < 1 || x > w {
			return nil, fmt.Errorf("--pixel %s is outside the cube: rows 1..%d, columns 1..%d", v, h, w)
		}
		out = append(out, [2]int{y - 1, x - 1})
	}
	return out, nil
}
