// Command seams measures how the strips of a run in strips join: against
// the clean cube, the PSNR gain of the result in strips over the whole
// cube's result line by line around the joins (the lines at the same
// offset from every join pooled), and the PSNR of both on the lines near
// the joins and on the others.
//
//	go run ./scripts/seams --ref $TDSC_DATA/cave/balloons_ms --whole w.hdr --strips t.hdr --tile 128
//
// The joins are at the multiples of --tile (the cores of `tdsc denoise
// --tile`); the profile covers --reach lines either side of them, from
// the line --reach above a join to the one --reach−1 below it, and "near"
// means the 3 lines either side. A PSNR is that of the squared error
// pooled over its lines and bands (not the mean of the bands's, as tdsc
// eval reports). The three cubes are read on the working
// scale (peak 255), as tdsc writes them from an input on that scale.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
)

// nearLines is how many lines either side of a join count as near it.
const nearLines = 3

func main() {
	ref := flag.String("ref", "", "clean cube")
	whole := flag.String("whole", "", "the result of the whole cube")
	strips := flag.String("strips", "", "the result in strips")
	lines := flag.Int("tile", 128, "lines of a strip's core (--tile of the run)")
	reach := flag.Int("reach", 8, "lines either side of a join in the profile")
	flag.Parse()
	if err := run(*ref, *whole, *strips, *lines, *reach); err != nil {
		fmt.Fprintln(os.Stderr, "seams:", err)
		os.Exit(1)
	}
}

func run(refPath, wholePath, stripsPath string, lines, reach int) error {
	if refPath == "" || wholePath == "" || stripsPath == "" || lines < 1 || reach < 1 {
		return fmt.Errorf("need --ref, --whole, --strips, --tile ≥ 1 and --reach ≥ 1")
	}
	var cubes [3]*msi.Cube
	for i, p := range []string{refPath, wholePath, stripsPath} {
		c, err := formats.Open(p)
		if err != nil {
			return err
		}
		if i > 0 && (c.Height != cubes[0].Height || c.Width != cubes[0].Width || c.Bands != cubes[0].Bands) {
			return fmt.Errorf("%s is %s, the reference %s", p, c.Size(), cubes[0].Size())
		}
		cubes[i] = c
	}
	ref, whole, strips := cubes[0], cubes[1], cubes[2]
	var joins []int
	for y := lines; y < ref.Height; y += lines {
		joins = append(joins, y)
	}
	if len(joins) == 0 {
		return fmt.Errorf("--tile %d leaves one strip of the %d lines: no joins", lines, ref.Height)
	}
	profile := ""
	for d := -reach; d < reach; d++ {
		var w, s sumSquares
		for _, j := range joins {
			if y := j + d; y >= 0 && y < ref.Height {
				w.addLine(ref, whole, y)
				s.addLine(ref, strips, y)
			}
		}
		profile += fmt.Sprintf(" %+.2f", s.psnr()-w.psnr())
	}
	fmt.Printf("PSNR gain of the strips over the whole cube, lines %d…%+d of the %d joins:%s dB\n", -reach, reach-1, len(joins), profile)
	var near, far [2]sumSquares // whole, strips
	for y := range ref.Height {
		part := &far
		for _, j := range joins {
			if y >= j-nearLines && y < j+nearLines {
				part = &near
			}
		}
		part[0].addLine(ref, whole, y)
		part[1].addLine(ref, strips, y)
	}
	fmt.Printf("near the joins (%d lines either side): whole %.3f dB, strips %.3f dB; elsewhere: whole %.3f dB, strips %.3f dB\n",
		nearLines, near[0].psnr(), near[1].psnr(), far[0].psnr(), far[1].psnr())
	return nil
}

// sumSquares sums squared errors over voxels.
type sumSquares struct {
	sum float64
	n   int
}

// addLine adds the errors of x against ref on line y, every band.
func (s *sumSquares) addLine(ref, x *msi.Cube, y int) {
	for b := range ref.Bands {
		r, v := ref.Band(b)[y*ref.Width:(y+1)*ref.Width], x.Band(b)[y*ref.Width:(y+1)*ref.Width]
		for i := range r {
			d := v[i] - r[i]
			s.sum += d * d
		}
		s.n += ref.Width
	}
}

// psnr returns the PSNR for peak 255.
func (s *sumSquares) psnr() float64 {
	return 10 * math.Log10(255*255/(s.sum/float64(s.n)))
}
