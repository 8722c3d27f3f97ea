package denoise

import (
	"fmt"

	"tdsc/internal/option"
)

// The settings that several methods read under the same name: the patch
// and dictionary settings of the patch-based methods. Each method declares
// its use of one with its own default (a Field), and may narrow its rule
// (WithMin); the name, kind, help and wording are these.
var (
	Beta       = Setting{Name: "beta", Kind: Float, Positive: true, Help: "ℓ1 weight β of the sparse codes"}
	Patch      = Setting{Name: "patch", Kind: Int, Min: 1, Help: "patch side p in pixels"}
	Depth      = Setting{Name: "depth", Kind: Int, Min: 1, Help: "patch depth q in bands"}
	Stride     = Setting{Name: "stride", Kind: Int, Min: 1, Help: "spatial step between patches, 1..patch (spectral step is 1)"}
	Atoms      = Setting{Name: "atoms", Kind: Int, Min: 1, Help: "number of dictionary atoms"}
	Samples    = Setting{Name: "samples", Kind: Int, Min: 1, Help: "training patches drawn at random from the input"}
	Iters      = Setting{Name: "iters", Kind: Int, Min: 1, Help: "maximum iterations of learning the dictionary (or of fitting the model)"}
	InnerIters = Setting{Name: "inner-iters", Kind: Int, Min: 1, Help: "FISTA iterations per training iteration"}
	CodeIters  = Setting{Name: "code-iters", Kind: Int, Min: 1, Help: "maximum FISTA iterations when coding a patch"}
	Seed       = Setting{Name: "seed", Kind: Uint, Min: 1, Help: "seed of the training sample and the initial dictionary"}
)

// The settings of the dictionary capabilities: a method that takes a
// dictionary (Spec.TakesDictionary) reads Dict, one that saves what it
// learned (Spec.SavesDictionary) SaveDict.
var (
	Dict     = Setting{Name: "dict", Kind: File, Help: "use this dictionary instead of learning one from the input"}
	SaveDict = Setting{Name: "save-dict", Kind: File, Help: "save the dictionary learned from the input to this file"}
)

// CheckStride returns an *option.Error for "stride" when the spatial step
// between patches (after defaults) is larger than the patch side, so that
// pixels between patches would be covered by none.
func CheckStride(stride, patch int) error {
	if stride > patch {
		return option.Errorf(Stride.Name, stride, "stride %d is larger than the patch size %d: some pixels would be covered by no patch", stride, patch)
	}
	return nil
}

// CheckPatchFits returns an error when a patch of patch×patch pixels ×
// depth bands does not fit in a cube of height×width×bands, saying the
// size needed.
func CheckPatchFits(height, width, bands, patch, depth int) error {
	if height < patch || width < patch || bands < depth {
		return fmt.Errorf("image is %d×%d×%d but the patch is %d×%d×%d: it needs at least %d×%d pixels and %d bands", height, width, bands, patch, patch, depth, patch, patch, depth)
	}
	return nil
}
