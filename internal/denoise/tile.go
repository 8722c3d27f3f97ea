package denoise

import (
	"context"

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

// DefaultHalo is the halo, in lines, of a method that is not a Tiler: each
// strip is denoised on its own with this much context on either side. It
// covers nonlocal's 31×31 search window around a 6×6 patch, and the
// patches of every other method.
const DefaultHalo = 32

// TileGeometry returns the strips m needs for noise level sigma and
// whether its strip-by-strip result is exactly its whole-cube result (m is
// a Tiler); otherwise every strip is denoised independently with
// DefaultHalo lines of context, and what the method learns (dictionaries,
// subspaces, ranks) is learned per strip.
func TileGeometry(m Method, sigma float64) (tile.Geometry, bool) {
	if t, ok := m.(Tiler); ok {
		return t.TileGeometry(sigma), true
	}
	return tile.Geometry{Halo: DefaultHalo, Align: 1}, false
}
