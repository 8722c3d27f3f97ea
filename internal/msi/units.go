package msi

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The one rule of units. Every format brings its stored values to the
// working [0, 255] scale the same way:
//
//	physical = stored × gain_b + offset_b   (ENVI data gain and offset values; else stored)
//	working  = physical × Scale
//
// where Scale is, in this order: the factor the user gives (--scale, for
// every cube a command reads); the one the file states (an ENVI header's
// reflectance scale factor F: stored = reflectance × F, so Scale = 255/F);
// for a PNG band stack its bit depth (8-bit ×1, 16-bit ×255/65535), and
// for the unsigned element types of image data the same, their full range
// (TypeScale: uint16 ×255/65535); else AutoScale's, from whether the
// values are floats and their largest value. Missing voxels (no-data,
// NaN) take no part in the largest value.
//
// Only AutoScale depends on the values, so only there can two files of one
// scene (a clean cube and its noisy version) land on different scales; a
// command that reads several cubes makes them agree (see Storage.FromData
// and Agree).
//
// Outputs go back the same way, to the input's units: see
// WriteOptions.Like and UnrecordedScale.

// TypeScale returns the scale of stored values of element type dtype (a
// type name of the array formats) when the type alone decides it, as a
// PNG's bit depth does: uint16, the type of 16-bit image sensors and of
// CAVE's PNG bands, is taken at its full range, ×255/65535, whatever its
// largest value, so that a clean cube and its noisy version, whose
// largest values differ, are read on one scale. ok is false for the other
// types, whose scale AutoScale finds from the values (uint8 is always ×1
// there; signed and wider types hold anything from reflectance × 10000 to
// 16-bit counts).
func TypeScale(dtype string) (scale float64, units string, ok bool) {
	if dtype == "uint16" {
		return 255.0 / 65535, "16-bit counts ×255/65535 (auto: uint16, taken at its full range)", true
	}
	return 0, "", false
}

// AutoScale returns the factor that brings values to the working [0, 255]
// scale (working = value × factor) when neither the user, the file nor
// the element type (TypeScale) says it, and a phrase saying what the values were taken to be, for the line
// that reports a read. float says whether the values are floats (a float
// element type, or values with gains applied); largest is their largest
// value (−Inf for none):
//
//   - floats with largest ≤ 2: 255. This is reflectance or intensity in
//     [0, 1]; the margin keeps noisy data and specular highlights, which
//     exceed 1 a little, on the same scale as the clean cube (a cube on the
//     [0, 255] scale whose brightest value is 2 would be almost black);
//   - floats with a larger largest value: 1. Float data beyond [0, 2] is
//     taken to be on the working scale already: that is how tdsc writes
//     float cubes made from PNG band stacks and [0, 255] data, and noisy
//     [0, 255] data exceeds 255 (raw float counts need an explicit scale);
//   - integers with largest ≤ 255: 1, the values are taken as they are;
//   - integers with a larger largest value: the values are taken to be
//     counts of an n-bit sensor, n the smallest whole number such that
//     largest ≤ 2ⁿ − 1, whatever the width of the type: the factor is
//     255/(2ⁿ − 1). So 16-bit counts held in int32 (as PIL gives 16-bit
//     PNGs) or int64 (NumPy's default integer) get 255/65535, 12-bit
//     counts 255/4095.
//
// The rule depends on the largest value only, so a dark image (none of
// its values over 255) is taken as it is, and two files of one scene may
// be taken differently (see Agree); give the scale for such data.
func AutoScale(float bool, largest float64) (scale float64, units string) {
	at := "largest value " + strconv.FormatFloat(largest, 'g', 6, 64)
	switch {
	case float && largest <= 2:
		return 255, "[0, 1] reflectance ×255 (auto: floats up to 2, " + at + ")"
	case float:
		return 1, "×1, taken as on the [0, 255] scale (auto: floats over 2, " + at + ")"
	case largest <= 255:
		return 1, "×1 (auto: integers up to 255, " + at + ")"
	}
	bits := math.Ceil(math.Log2(largest + 1))
	full := math.Exp2(bits) - 1
	if full < largest { // guard against rounding in Log2
		bits++
		full = math.Exp2(bits) - 1
	}
	return 255 / full, fmt.Sprintf("%g-bit counts ×255/%g (auto: integers over 255, %s)", bits, full, at)
}

// Agree returns the scale at which to read a cube of the scene of ref, a
// cube read before it (the reference it is scored against, the noisy cube
// it was denoised from), which was read as in, so that the two are on one
// scale: 0 when in's scale stands. Only a scale found from the values
// (Storage.FromData) can be wrong for want of a better rule:
//
//   - integers found so (n-bit counts by their largest value) take the
//     scale of ref when it holds integers too (in an array or ENVI file),
//     found from its values, stated by its file or fixed by its type:
//     the same sensor's counts, whose noisy version reaches higher;
//   - floats found so, one taken as [0, 1] reflectance (largest value up
//     to 2) and the other as on the [0, 255] scale, are an error: either
//     may be right (noisy reflectance beyond 2, or a scene in [0, 255]);
//     it says which --scale reads both as reflectance and which as they
//     are.
//
// Scales that the user, the file or the element type state are kept, as
// are integers read beside floats or a PNG band stack: their units are
// each file's own.
func Agree(ref, in Storage) (scale float64, err error) {
	if !in.FromData || ref.Scale == in.Scale {
		return 0, nil
	}
	switch {
	case in.floats():
		if ref.FromData && ref.floats() {
			return 0, fmt.Errorf("one scene read on two scales: its cubes must be on one; give --scale 255 if both hold [0, 1] reflectance, --scale 1 if both are on the [0, 255] scale")
		}
	case ref.DType != "" && !ref.floats():
		return ref.Scale, nil
	}
	return 0, nil
}

// floats reports whether the values read were floats: a float element
// type, or values with gains applied.
func (s Storage) floats() bool { return strings.HasPrefix(s.DType, "float") || s.Gains != nil }

// ReflectanceScale returns the Scale of values stored as reflectance ×
// factor (an ENVI reflectance scale factor), and the phrase of a read.
func ReflectanceScale(factor float64) (scale float64, units string) {
	return 255 / factor, fmt.Sprintf("reflectance ×255 (reflectance scale factor %s)", strconv.FormatFloat(factor, 'g', -1, 64))
}

// ReflectanceFactor returns the reflectance scale factor that records
// Scale s in a file (255/s), rounded to 12 significant digits so that a
// factor read as a whole number (10000, 65535) is written as one and
// reads back as the same Scale.
func ReflectanceFactor(s float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(255/s, 'g', 12, 64), 64)
	return f
}

// GivenScale returns the phrase of a read with a given scale.
func GivenScale(s float64) string {
	return "×" + strconv.FormatFloat(s, 'g', 6, 64) + " (--scale)"
}

// Largest returns the largest of values that is not NaN, −Inf when there
// is none.
func Largest(values []float64) float64 {
	m := math.Inf(-1)
	for _, v := range values {
		if v > m {
			m = v
		}
	}
	return m
}

// Missing counts the missing voxels of c: those whose value is NaN. A
// format marks no-data voxels (an ENVI data ignore value, NaN in a float
// file) so on reading, and writes them back as they were (see
// Metadata.NoData); the commands keep them out of every statistic.
func (c *Cube) Missing() int {
	n := 0
	for _, v := range c.Data {
		if v != v {
			n++
		}
	}
	return n
}
