package denoise

import (
	"context"

	"tdsc/internal/msi"
	"tdsc/internal/tile"
)

// Tiler is implemented by the methods whose strip-by-strip result
// (package tile) is bit-identical to their result on the whole cube
// (Spec.ExactStrips). PrepareTiles learns from the whole cube, read strip by
// strip, what Denoise would learn from it, and returns that in its Result
// with the method that denoises every strip of TileGeometry with it, so
// that the strip's core comes out exactly as in the whole cube's run. The
// Tiler itself is left as it was.
type Tiler interface {
	Method
	TileGeometry(sigma float64) tile.Geometry
	PrepareTiles(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64) (Method, Result, error)
}

// StripPreparer is implemented by the methods whose strip-by-strip result
// is close to, not the same as, their whole-cube result, but that learn
// from the whole cube what every strip then shares (a dictionary, a rank)
// rather than each strip learning its own from fewer pixels.
// PrepareStrips learns it from the cube of r, read strip by strip within
// the strips of StripGeometry, and returns the method that denoises every
// strip with it (its Draft, if it is a Drafter, keeps it too) and in the
// Result what is to be saved of it. The StripPreparer itself is left as it
// was.
type StripPreparer interface {
	Method
	StripGeometry(sigma float64) tile.Geometry
	PrepareStrips(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64) (Method, Result, error)
}

// RepairLines is implemented by the readers that a StripPreparer is
// given on the path that removes sparse noise around the method (package
// repair): the lines as the repair's first pass denoises them, their
// impulse, dead and missing voxels filled from their neighbours. Every
// later pass sets those voxels to the pass before's estimate instead, so
// a method that chooses how it works from the cube's statistics (nonlocal:
// on eigen-images or on the bands) may leave them out to choose for the
// passes before the last as the last pass will see the cube.
type RepairLines interface {
	tile.Reader
	// ReadFilled returns the lines ReadLines returns and which of their
	// voxels (in the cube's order) were filled.
	ReadFilled(y0, n int) (*msi.Cube, []bool, error)
}

// DefaultHalo is the halo, in lines, of a method that is neither a Tiler
// nor a StripPreparer: each strip is denoised on its own with this much
// context on either side. It covers a 31×31 search window around a 6×6
// patch, and the patches of every other method.
const DefaultHalo = 32

// TileGeometry returns the strips m needs for noise level sigma and
// whether its strip-by-strip result is exactly its whole-cube result (m is
// a Tiler). A StripPreparer's strips are its own; any other method's are
// denoised independently with DefaultHalo lines of context, and what the
// method learns (dictionaries, subspaces, ranks) is learned per strip.
func TileGeometry(m Method, sigma float64) (tile.Geometry, bool) {
	if t, ok := m.(Tiler); ok {
		return t.TileGeometry(sigma), true
	}
	if p, ok := m.(StripPreparer); ok {
		return p.StripGeometry(sigma), false
	}
	return tile.Geometry{Halo: DefaultHalo, Align: 1}, false
}

// LastPasser is implemented by the methods a StripPreparer returns from
// RepairLines whose repair's last pass, in strips, is prepared as a run
// on the whole cube prepares it: from the whole cube the first passes
// leave (the voxels they filled at their estimate, the stripes estimated
// again), once every strip's first passes are done. LastPass returns the
// method to prepare on those lines (PrepareStrips), as the whole run's
// repair has it before it learns from them, or nil when the method was
// not prepared on RepairLines.
type LastPasser interface {
	Method
	LastPass() Method
}

// PrepareStrips returns the method that denoises the strips of the cube of
// r (planned with TileGeometry) and the Result of what it learned from the
// whole cube: a Tiler's PrepareTiles, a StripPreparer's PrepareStrips, or
// m itself and an empty Result for any other method.
func PrepareStrips(ctx context.Context, m Method, r tile.Reader, strips []tile.Strip, sigma float64) (Method, Result, error) {
	if t, ok := m.(Tiler); ok {
		return t.PrepareTiles(ctx, r, strips, sigma)
	}
	if p, ok := m.(StripPreparer); ok {
		return p.PrepareStrips(ctx, r, strips, sigma)
	}
	return m, Result{}, nil
}
