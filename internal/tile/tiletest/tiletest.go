// Package tiletest holds a cube in memory behind package tile's Reader and
// Writer, for tests that compare strip-by-strip runs with whole-cube ones.
package tiletest

import "tdsc/internal/tile"

// Lines reads and writes the lines of Cube (tile.Lines, in the spelling
// the tests use).
type Lines = tile.Lines
