// Command pgcubes writes the clean cubes of the signal-dependent noise
// measurements (scripts/poisson.sh): a scene's centre crop, resampled to
// another number of bands over the same wavelength range by linear
// interpolation between neighbouring bands, as a float32 ENVI cube on the
// working [0, 255] scale.
//
//	go run ./scripts/pgcubes --input $TDSC_DATA/cave/balloons_ms --crop 160 --bands 224 --out balloons224.hdr
//
// --crop 0 keeps the whole height and width; --bands 0 keeps the bands.
// --flightline stacks the right half of the result below its left half:
// a 2H×W/2 cube shaped like an airborne flightline, many lines of few
// samples (balloons 512×512 gives 1024×256), for the strips and shards
// measurements.
package main

import (
	"flag"
	"fmt"
	"os"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
)

func main() {
	input := flag.String("input", "", "clean scene (any format tdsc reads)")
	crop := flag.Int("crop", 160, "side of the centre crop (0: the whole scene)")
	bands := flag.Int("bands", 0, "number of bands to resample to (0: as the scene)")
	out := flag.String("out", "", "output ENVI .hdr")
	force := flag.Bool("force", false, "overwrite the output")
	flightline := flag.Bool("flightline", false, "stack the right half below the left half (2H×W/2)")
	flag.Parse()
	if err := run(*input, *crop, *bands, *out, *force, *flightline); err != nil {
		fmt.Fprintln(os.Stderr, "pgcubes:", err)
		os.Exit(1)
	}
}

func run(input string, crop, bands int, out string, force, flightline bool) error {
	if input == "" || out == "" || crop < 0 || bands < 0 || bands == 1 {
		return fmt.Errorf("want --input, --out, --crop ≥ 0 and --bands 0 or ≥ 2")
	}
	src, err := formats.Open(input)
	if err != nil {
		return err
	}
	h, w := src.Height, src.Width
	if crop > 0 {
		if crop > h || crop > w {
			return fmt.Errorf("%s is %s, smaller than a %d×%d crop", input, src.Size(), crop, crop)
		}
		h, w = crop, crop
	}
	if bands == 0 {
		bands = src.Bands
	}
	y0, x0 := (src.Height-h)/2, (src.Width-w)/2
	dst := msi.NewCube(h, w, bands)
	for b := range bands {
		// Band b sits at position p of the source's bands, the two ends
		// matched: a value between bands lo and lo+1.
		p := 0.0
		if bands > 1 {
			p = float64(b) * float64(src.Bands-1) / float64(bands-1)
		}
		lo := min(int(p), src.Bands-2)
		t := p - float64(lo)
		if src.Bands == 1 {
			lo, t = 0, 0
		}
		for y := range h {
			for x := range w {
				v := src.At(y0+y, x0+x, lo) * (1 - t)
				if t > 0 {
					v += src.At(y0+y, x0+x, lo+1) * t
				}
				dst.Set(y, x, b, v)
			}
		}
		if len(src.Wavelengths) == src.Bands && src.Bands > 1 {
			dst.Wavelengths = append(dst.Wavelengths, src.Wavelengths[lo]*(1-t)+src.Wavelengths[lo+1]*t)
		}
	}
	dst.Processing = fmt.Sprintf("centre %d×%d crop of %s resampled to %d bands", h, w, input, bands)
	if flightline {
		dst = stackHalves(dst)
	}
	_, err = formats.Write(out, dst, msi.WriteOptions{Force: force})
	return err
}

// stackHalves returns c's left half (the first W/2 columns) with its right
// half (the next W/2; an odd last column is dropped) below it.
func stackHalves(c *msi.Cube) *msi.Cube {
	half := c.Width / 2
	dst := msi.NewCube(2*c.Height, half, c.Bands)
	dst.Metadata = c.Metadata
	for b := range c.Bands {
		for y := range c.Height {
			for x := range half {
				dst.Set(y, x, b, c.At(y, x, b))
				dst.Set(c.Height+y, x, b, c.At(y, half+x, b))
			}
		}
	}
	dst.Processing += fmt.Sprintf(", its %d-column halves stacked into %d lines", half, 2*c.Height)
	return dst
}
