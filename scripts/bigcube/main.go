// Command bigcube writes a large synthetic multispectral ENVI cube for the
// strip-processing benchmark (scripts/bench-tiles.sh): a mosaic of the
// CAVE scenes of a folder, each 512×512 tile a scene circularly shifted by
// a seeded random offset, resampled from the scenes' 31 bands (400–700 nm)
// to --bands bands over the same range by linear interpolation, with
// Gaussian noise of standard deviation --sigma added (seeded). Real image
// content matters here: the denoiser's work per patch depends on how
// sparse the codes are, which random data would not show.
//
//	go run ./scripts/bigcube --scenes $TDSC_DATA/cave --size 4096 --bands 64 --sigma 30 --out big.hdr
//
// --lines N writes only the first N lines of that cube (the same values),
// for a measurement of strips as wide as it at less cost.
//
// The cube is written a block of lines at a time (float32 BSQ, through
// formats.CreateWindow), so memory is the scenes plus one block.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
)

const blockLines = 64

func main() {
	scenes := flag.String("scenes", "", "folder of CAVE scene folders (*_ms)")
	size := flag.Int("size", 1024, "height and width of the cube")
	lines := flag.Int("lines", 0, "height of the cube, if not --size: the first lines of the --size cube, the same values")
	bands := flag.Int("bands", 64, "number of bands")
	sigma := flag.Float64("sigma", 0, "standard deviation of the added noise on the [0, 255] scale")
	seed := flag.Uint64("seed", 1, "seed of the shifts and the noise")
	out := flag.String("out", "", "output ENVI .hdr")
	force := flag.Bool("force", false, "overwrite the output")
	flag.Parse()
	if *lines == 0 {
		*lines = *size
	}
	if err := run(*scenes, *lines, *size, *bands, *sigma, *seed, *out, *force); err != nil {
		fmt.Fprintln(os.Stderr, "bigcube:", err)
		os.Exit(1)
	}
}

func run(dir string, lines, size, bands int, sigma float64, seed uint64, out string, force bool) error {
	if dir == "" || out == "" || size < 1 || lines < 1 || lines > size || bands < 2 || sigma < 0 {
		return fmt.Errorf("want --scenes, --out, --size ≥ 1, --lines from 1 to --size, --bands ≥ 2 and --sigma ≥ 0")
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*_ms"))
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("no scene folders (*_ms) in %s", dir)
	}
	sort.Strings(paths)
	var cubes []*msi.Cube
	for _, p := range paths {
		c, err := formats.Open(p)
		if err != nil {
			return err
		}
		if len(cubes) > 0 && !c.SameSize(cubes[0]) {
			return fmt.Errorf("%s is %s, %s is %s", p, c.Size(), paths[0], cubes[0].Size())
		}
		cubes = append(cubes, c)
	}
	src := cubes[0]
	lo, hi := 400.0, 700.0
	if wl := src.Wavelengths; len(wl) == src.Bands {
		lo, hi = wl[0], wl[len(wl)-1]
	}
	// Band j of the output lies at position t in the scenes' bands.
	wavelengths := make([]float64, bands)
	below := make([]int, bands)
	frac := make([]float64, bands)
	for j := range bands {
		t := float64(j) * float64(src.Bands-1) / float64(bands-1)
		below[j] = min(int(t), src.Bands-2)
		frac[j] = t - float64(below[j])
		wavelengths[j] = lo + (hi-lo)*float64(j)/float64(bands-1)
	}
	// One scene and shift per tile of the mosaic.
	tiles := (size + src.Height - 1) / src.Height
	tilesX := (size + src.Width - 1) / src.Width
	rng := rand.New(rand.NewPCG(seed, 0x6269_6763_7562_6531))
	type placement struct {
		scene  *msi.Cube
		dy, dx int
	}
	mosaic := make([]placement, tiles*tilesX)
	for i := range mosaic {
		mosaic[i] = placement{cubes[rng.IntN(len(cubes))], rng.IntN(src.Height), rng.IntN(src.Width)}
	}
	noise := rand.New(rand.NewPCG(seed, 0x6269_6763_7562_6532))

	w, err := formats.CreateWindow(out, lines, size, bands, msi.Metadata{Wavelengths: wavelengths,
		Processing: fmt.Sprintf("synthetic %d×%d×%d mosaic of %d CAVE scenes, shifted, %d bands interpolated, noise σ = %g seed %d",
			lines, size, bands, len(cubes), bands, sigma, seed)}, msi.WriteOptions{Force: force})
	if err != nil {
		return err
	}
	// The placements and the noise are drawn in the order of the lines, so
	// that a cube of fewer lines is the first lines of the square one.
	for y0 := 0; y0 < lines; y0 += blockLines {
		n := min(blockLines, lines-y0)
		block := msi.NewCube(n, size, bands)
		for j := range bands {
			b0, f := below[j], frac[j]
			for y := range n {
				gy := y0 + y
				row := block.Band(j)[y*size : (y+1)*size]
				for x := range row {
					p := mosaic[(gy/src.Height)*tilesX+x/src.Width]
					sy, sx := (gy+p.dy)%src.Height, (x+p.dx)%src.Width
					v := (1-f)*p.scene.At(sy, sx, b0) + f*p.scene.At(sy, sx, b0+1)
					row[x] = v + sigma*noise.NormFloat64()
				}
			}
		}
		if err := w.WriteLines(block, y0); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Commit()
}
