package msi

import "fmt"

// MaxMagnitude bounds the magnitude of the values a cube file may hold.
// No image is stored with values beyond ±10³⁰, but floats read with the
// wrong byte order (a header that says little-endian over big-endian
// data) are such values for a good share of the voxels (a float32 whose
// low byte becomes its exponent byte lands above 10³⁰ about one time in
// eight), and a run on them goes on for minutes and writes nonsense.
const MaxMagnitude = 1e30

// Implausible reports whether a value read from a file is beyond
// ±MaxMagnitude (NaN, a missing voxel, is not).
func Implausible(v float64) bool { return v > MaxMagnitude || v < -MaxMagnitude }

// ImplausibleError is the error for an Implausible value v read at band
// b, line y, sample x (from 0) of a file.
func ImplausibleError(v float64, b, y, x int) error {
	return fmt.Errorf("value %g at band %d, line %d, sample %d (from 0) is beyond ±1e30, which no image holds: is the byte order the header gives the file's?", v, b, y, x)
}
