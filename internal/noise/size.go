package noise

import "fmt"

// MinSide is the smallest height and width of a band whose noise the
// estimators measure: one 2×2 block of the finest Haar wavelet band
// (EstimateBand), which the sparse-noise search needs as well.
const MinSide = 2

// CheckSize returns an error for a cube of height×width×bands whose bands
// are too small to measure their noise (MinSide), saying the size needed.
// The estimators panic on such bands; commands call it first.
func CheckSize(height, width, bands int) error {
	if height >= MinSide && width >= MinSide {
		return nil
	}
	return fmt.Errorf("a %d×%d×%d cube is too small to measure its noise: it needs at least %d×%d pixels", height, width, bands, MinSide, MinSide)
}
