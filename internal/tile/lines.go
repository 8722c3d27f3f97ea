package tile

import (
	"fmt"

	"tdsc/internal/msi"
)

// Lines reads and writes the lines of Cube, held in memory: a Reader and
// a Writer, for a cube that is denoised strip by strip though it fits in
// memory (the nonlocal method's line blocks) and for tests that compare
// strip-by-strip runs with whole-cube ones.
type Lines struct{ Cube *msi.Cube }

// Size returns the cube's height, width and band count.
func (l Lines) Size() (height, width, bands int) { return l.Cube.Height, l.Cube.Width, l.Cube.Bands }

// ReadLines returns a copy of lines y0 .. y0+n−1.
func (l Lines) ReadLines(y0, n int) (*msi.Cube, error) {
	if n < 1 || y0 < 0 || y0+n > l.Cube.Height {
		return nil, fmt.Errorf("tile: lines [%d, %d) of %d", y0, y0+n, l.Cube.Height)
	}
	return l.Cube.Crop(y0, 0, 0, n, l.Cube.Width, l.Cube.Bands), nil
}

// WriteLines copies the lines of c into lines y0 .. y0+c.Height−1.
func (l Lines) WriteLines(c *msi.Cube, y0 int) error {
	if c.Width != l.Cube.Width || c.Bands != l.Cube.Bands || y0 < 0 || y0+c.Height > l.Cube.Height {
		return fmt.Errorf("tile: a %s block at line %d of a %s cube", c.Size(), y0, l.Cube.Size())
	}
	for b := range c.Bands {
		copy(l.Cube.Band(b)[y0*c.Width:], c.Band(b))
	}
	return nil
}
