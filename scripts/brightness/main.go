// Command brightness splits the error of denoised cubes by the clean
// value of the voxel, to see where signal-dependent noise costs: for every
// bin of the clean cube's values, the share of the voxels, the noise σ
// there under σ²(x) = a·x + b (the root of the bin's mean variance), each
// result's mean squared error in the bin and its share of the result's
// whole squared error. Results of i.i.d. Gaussian noise at several σ
// (--iid) give, by linear interpolation in σ, the error the same method
// makes on i.i.d. noise of the bin's own σ: the column that says whether a
// result on signal-dependent noise does, at every brightness, as well as
// the method does on white noise of that level.
//
//	go run ./scripts/brightness --ref clean.hdr --a 2 --b 16 \
//	    --iid 2=g2.hdr,5=g5.hdr,8=g8.hdr,12=g12.hdr,16=g16.hdr,20=g20.hdr,24=g24.hdr \
//	    PG=d_pg.hdr twin=d_twin.hdr
//
// The cubes are read as tdsc reads them (on its working scale); the table
// is Markdown on stdout.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
)

func main() {
	ref := flag.String("ref", "", "the clean cube")
	a := flag.Float64("a", 0, "slope a of the noise-level function σ²(x) = a·x + b")
	b := flag.Float64("b", 0, "intercept b of the noise-level function")
	edges := flag.String("edges", "0,4,8,16,32,64,128,256", "bin edges of the clean value, increasing")
	iid := flag.String("iid", "", "results of i.i.d. Gaussian noise, SIGMA=PATH,… (at least two σ spanning the bins' σ)")
	flag.Parse()
	if err := run(*ref, *a, *b, *edges, *iid, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "brightness:", err)
		os.Exit(1)
	}
}

// labelled is a result and the name of its column.
type labelled struct {
	label string
	sigma float64 // of an --iid result
	path  string
}

func run(ref string, a, b float64, edgeList, iidList string, results []string) error {
	if ref == "" || len(results) == 0 {
		return fmt.Errorf("want --ref and at least one LABEL=PATH result")
	}
	edges, err := floats(edgeList)
	if err != nil || len(edges) < 2 || !slices.IsSorted(edges) {
		return fmt.Errorf("--edges %q: want at least two increasing numbers", edgeList)
	}
	named, err := pairs(results, false)
	if err != nil {
		return err
	}
	var iid []labelled
	if iidList != "" {
		if iid, err = pairs(strings.Split(iidList, ","), true); err != nil {
			return err
		}
		slices.SortFunc(iid, func(p, q labelled) int { return cmp.Compare(p.sigma, q.sigma) })
	}
	clean, err := formats.Open(ref)
	if err != nil {
		return err
	}
	bins := make([]int, len(clean.Data)) // -1 outside the edges
	count := make([]int, len(edges)-1)
	variance := make([]float64, len(edges)-1)
	for i, x := range clean.Data {
		k := binOf(edges, x)
		bins[i] = k
		if k >= 0 {
			count[k]++
			variance[k] += a*max(x, 0) + b
		}
	}
	binned := func(path string) ([]float64, error) {
		c, err := formats.Open(path)
		if err != nil {
			return nil, err
		}
		if c.Height != clean.Height || c.Width != clean.Width || c.Bands != clean.Bands {
			return nil, fmt.Errorf("%s is %s, the reference %s", path, c.Size(), clean.Size())
		}
		return binSquares(clean, c, bins, len(count)), nil
	}
	squares := make([][]float64, len(named))
	for i, r := range named {
		if squares[i], err = binned(r.path); err != nil {
			return err
		}
	}
	iidSquares := make([][]float64, len(iid))
	for i, r := range iid {
		if iidSquares[i], err = binned(r.path); err != nil {
			return err
		}
	}

	head := "| clean value | voxels | noise σ there |"
	rule := "|---|---|---|"
	for _, r := range named {
		head += " " + r.label + " MSE |"
		rule += "---|"
	}
	if len(iid) > 0 {
		head += " i.i.d. MSE at that σ |"
		rule += "---|"
	}
	for _, r := range named {
		head += " share of " + r.label + "'s error |"
		rule += "---|"
	}
	fmt.Println(head)
	fmt.Println(rule)
	total := float64(len(clean.Data))
	for k, n := range count {
		if n == 0 {
			continue
		}
		sigma := math.Sqrt(variance[k] / float64(n))
		row := fmt.Sprintf("| [%g, %g) | %.1f %% | %.1f |", edges[k], edges[k+1], 100*float64(n)/total, sigma)
		for i := range named {
			row += fmt.Sprintf(" %.2f |", squares[i][k]/float64(n))
		}
		if len(iid) > 0 {
			row += " " + interpolated(iid, iidSquares, k, n, sigma) + " |"
		}
		for i := range named {
			row += fmt.Sprintf(" %.0f %% |", 100*squares[i][k]/sum(squares[i]))
		}
		fmt.Println(row)
	}
	return nil
}

// binOf returns the bin of x among edges, -1 outside them.
func binOf(edges []float64, x float64) int {
	if x < edges[0] || x >= edges[len(edges)-1] {
		return -1
	}
	k, _ := slices.BinarySearch(edges, x)
	if k < len(edges) && edges[k] == x {
		return k
	}
	return k - 1
}

// binSquares returns the sum of squared differences of c from clean in
// each of n bins.
func binSquares(clean, c *msi.Cube, bins []int, n int) []float64 {
	s := make([]float64, n)
	for i, k := range bins {
		if k >= 0 {
			d := c.Data[i] - clean.Data[i]
			s[k] += d * d
		}
	}
	return s
}

// interpolated returns the MSE in bin k (of n voxels) of i.i.d. noise of
// σ, linear between the two results of σ nearest it on either side, or
// "—" when σ is outside their range.
func interpolated(iid []labelled, squares [][]float64, k, n int, sigma float64) string {
	for i := 1; i < len(iid); i++ {
		lo, hi := iid[i-1], iid[i]
		if sigma < lo.sigma || sigma > hi.sigma {
			continue
		}
		ml, mh := squares[i-1][k]/float64(n), squares[i][k]/float64(n)
		return fmt.Sprintf("%.2f", ml+(mh-ml)*(sigma-lo.sigma)/(hi.sigma-lo.sigma))
	}
	return "—"
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func floats(list string) ([]float64, error) {
	var v []float64
	for _, f := range strings.Split(list, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		v = append(v, x)
	}
	return v, nil
}

// pairs reads LABEL=PATH items; with numeric, LABEL is the σ of an i.i.d.
// result.
func pairs(items []string, numeric bool) ([]labelled, error) {
	var out []labelled
	for _, it := range items {
		label, path, ok := strings.Cut(it, "=")
		if !ok || label == "" || path == "" {
			return nil, fmt.Errorf("%q: want LABEL=PATH", it)
		}
		r := labelled{label: label, path: path}
		if numeric {
			s, err := strconv.ParseFloat(label, 64)
			if err != nil || s <= 0 {
				return nil, fmt.Errorf("%q: want SIGMA=PATH with σ > 0", it)
			}
			r.sigma = s
		}
		out = append(out, r)
	}
	return out, nil
}
