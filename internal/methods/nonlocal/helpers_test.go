package nonlocal

import "tdsc/internal/methods/twodsc"

// pilotForTests is a quick 2DSC pilot: few samples and iterations.
func pilotForTests() twodsc.Options {
	return twodsc.Options{Samples: 500, TrainIters: 2, Atoms: 12}
}
