package tsc

import "tdsc/internal/algebra/tproduct"

// BLASName names the implementation of the solver's matrix products
// (tproduct.BLASName): "pure Go" in the default build, "OpenBLAS" under
// the build tag openblas; the version line of the command line says it.
func BLASName() string { return tproduct.BLASName() }
