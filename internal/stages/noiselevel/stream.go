package noiselevel

import (
	"fmt"
	"math"
	"slices"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/stages/sparsenoise"
)

// StreamWindows bounds the window statistics a Stream keeps, over all
// bands and both fits of a band (its own details and its spectral
// details): 2²⁰ of them, 48 MiB (48 bytes each).
const StreamWindows = 1 << 20

// Stream fits the noise-level functions of a cube read a window of lines
// at a time, in bounded memory, as Estimate fits them on the whole cube.
//
// The fit of a band sorts its 4×4 windows by mean, cuts them into levels
// of equal count and selects them again with every function it fits: it
// needs the windows' statistics themselves, not a summary that merges
// (a histogram of the means would fix the levels' edges before the
// selection moves them). So the Stream keeps the statistics of every
// window, as Estimate does, up to StreamWindows of them; on a larger cube
// it keeps a deterministic subsample, every s-th window of every row and
// every column of a band's windows (kept), s the smallest stride within
// the bound. The subsample depends on the cube's size alone, so every run
// fits the same functions from it. With every window kept (s = 1) and the
// same voxels left out, the fit is Estimate's bit for bit; with a stride
// its standard errors grow by about √s.
//
// What differs from Estimate is the search for stuck values (see stuck):
// it needs a band's histogram of values, which only the whole band gives,
// and is made on every window of lines instead, the clipping levels of a
// band being those found in any of its windows. A value stuck across the
// band is stuck in the windows that hold it; one stuck in too few voxels
// of every window to be told from chance is kept where Estimate leaves it
// out. The impulses and dead pixels a sparse-noise detector marks are
// left out through the mask given with every window.
type Stream struct {
	height, width, bands int
	stride               int
	// next is the cube's line that the next lines given start at, and
	// rows the rows of windows fitted so far.
	next, rows int
	// pending holds the lines given that do not yet make a row of
	// windows (fewer than 4), with their mask.
	pending     *msi.Cube
	pendingMask []uint8
	// own and spectral are every band's windows on its own and on its
	// spectral details; clips the clipping levels found.
	own, spectral [][]windowStats
	clips         [][]float64
	// sums and counts are every band's sum of its values with data and
	// not in the mask, and their number, in the cube's order.
	sums   []float64
	counts []int
}

// NewStream returns a Stream for a height×width×bands cube. It panics for
// a cube of no voxel.
func NewStream(height, width, bands int) *Stream {
	return newStream(height, width, bands, StreamWindows)
}

// newStream returns a Stream that keeps at most limit window statistics.
func newStream(height, width, bands, limit int) *Stream {
	if height < 1 || width < 1 || bands < 1 {
		panic(fmt.Sprintf("noiselevel: a stream of a %d×%d×%d cube", height, width, bands))
	}
	fits := bands
	if bands > 2 {
		fits += bands - 2 // the spectral details of the bands with two neighbours
	}
	rows, cols := height/window, width/window
	stride := max(1, (rows*cols*fits+limit-1)/limit)
	for stride < rows+cols && keptWindows(rows, cols, 0, stride)*fits > limit {
		stride++
	}
	return &Stream{
		height: height, width: width, bands: bands,
		stride: stride,
		own:    make([][]windowStats, bands), spectral: make([][]windowStats, bands),
		clips: make([][]float64, bands),
		sums:  make([]float64, bands), counts: make([]int, bands),
	}
}

// Stride returns s: a band's windows are kept when their row and column
// of windows sum to a multiple of it (1: all).
func (s *Stream) Stride() int { return s.stride }

// Add gives s the next lines of the cube, c, with mask, when not nil,
// marking the voxels to leave out (nonzero; one entry a voxel of c, in
// its Data order), as Options.Mask marks them for Estimate. Lines are
// given in order from the first, each once. It panics for lines of
// another width or bands, or past the cube's end.
func (s *Stream) Add(c *msi.Cube, mask []uint8) {
	if c.Width != s.width || c.Bands != s.bands || s.next+c.Height > s.height {
		panic(fmt.Sprintf("noiselevel: %s lines at line %d of a %d×%d×%d stream", c.Size(), s.next, s.height, s.width, s.bands))
	}
	if mask != nil && len(mask) != len(c.Data) {
		panic(fmt.Sprintf("noiselevel: mask of %d voxels for %s lines", len(mask), c.Size()))
	}
	s.next += c.Height
	n := c.Height * c.Width
	for b := range s.bands {
		for i, v := range c.Band(b) {
			if !math.IsNaN(v) && (mask == nil || mask[b*n+i] == 0) {
				s.sums[b] += v
				s.counts[b]++
			}
		}
	}
	if s.pending != nil {
		c, mask = joinLines(s.pending, s.pendingMask, c, mask)
		s.pending, s.pendingMask = nil, nil
	}
	whole := c.Height / window * window
	if rest := c.Height - whole; rest > 0 {
		s.pending = c.Crop(whole, 0, 0, rest, c.Width, c.Bands)
		if mask != nil {
			s.pendingMask = sparsenoise.CropMask(mask, c, whole, rest)
		}
	}
	if whole == 0 {
		return
	}
	if whole < c.Height {
		if mask != nil {
			mask = sparsenoise.CropMask(mask, c, 0, whole)
		}
		c = c.Crop(0, 0, 0, whole, c.Width, c.Bands)
	}
	n = whole * c.Width
	left, clips := make([][]bool, c.Bands), make([][]float64, c.Bands)
	parallel.Each(c.Bands, func(b int) {
		var m []uint8
		if mask != nil {
			m = mask[b*n : (b+1)*n]
		}
		left[b], clips[b] = stuck(c.Band(b), m, whole, c.Width)
	})
	parallel.Each(c.Bands, func(b int) {
		band := c.Band(b)
		s.own[b] = windows(s.own[b], band, nil, left[b], whole, c.Width, s.rows, s.stride)
		for _, v := range clips[b] {
			if i, found := slices.BinarySearch(s.clips[b], v); !found {
				s.clips[b] = slices.Insert(s.clips[b], i, v)
			}
		}
		if b == 0 || b+1 == c.Bands {
			return
		}
		lo, hi := c.Band(b-1), c.Band(b+1)
		detail, joint := make([]float64, n), make([]bool, n)
		for i := range detail {
			detail[i] = band[i] - (lo[i]+hi[i])/2
			joint[i] = left[b][i] || left[b-1][i] || left[b+1][i] || math.IsNaN(detail[i])
		}
		s.spectral[b] = windows(s.spectral[b], band, detail, joint, whole, c.Width, s.rows, s.stride)
	})
	s.rows += whole / window
}

// Report fits the functions of every band to the windows given and
// decides, as Estimate does (see the Stream's comment for what differs).
// It panics unless every line of the cube was given.
func (s *Stream) Report() *Report {
	if s.next != s.height {
		panic(fmt.Sprintf("noiselevel: a report after %d of the %d lines", s.next, s.height))
	}
	r := &Report{Functions: make([]Function, s.bands), Bands: make([]Band, s.bands)}
	parallel.Each(s.bands, func(b int) {
		fit := fitWindows(s.own[b], s.clips[b])
		if fit.Fitted && b > 0 && b+1 < s.bands {
			if evidence := fitWindows(s.spectral[b], s.clips[b]); evidence.Fitted {
				fit.Z, fit.Ratio = evidence.Z, evidence.Ratio
			}
		}
		r.Bands[b] = fit
		r.Functions[b] = fit.Function
	})
	r.decide()
	return r
}

// Means returns the mean of every band over its voxels with data and not
// in the masks given, summed in the cube's order (0 for a band without
// one).
func (s *Stream) Means() []float64 {
	means := make([]float64, s.bands)
	for b, n := range s.counts {
		if n > 0 {
			means[b] = s.sums[b] / float64(n)
		}
	}
	return means
}

// joinLines returns the lines top followed by bottom, and their masks
// joined (nil when neither has one).
func joinLines(top *msi.Cube, topMask []uint8, bottom *msi.Cube, bottomMask []uint8) (*msi.Cube, []uint8) {
	c := msi.NewCube(top.Height+bottom.Height, top.Width, top.Bands)
	var mask []uint8
	if topMask != nil || bottomMask != nil {
		mask = make([]uint8, len(c.Data))
	}
	nt, nb := top.Height*top.Width, bottom.Height*bottom.Width
	for b := range c.Bands {
		at := b * (nt + nb)
		copy(c.Data[at:], top.Band(b))
		copy(c.Data[at+nt:], bottom.Band(b))
		if topMask != nil {
			copy(mask[at:], topMask[b*nt:(b+1)*nt])
		}
		if bottomMask != nil {
			copy(mask[at+nt:], bottomMask[b*nb:(b+1)*nb])
		}
	}
	return c, mask
}
