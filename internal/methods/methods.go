// Package methods is tdsc's registry of denoising methods: one line per
// method, each the Spec that the method's package declares (package
// denoise). Adding a method is its package and its line here; the command
// line's flags, help, completion and checks follow from the Spec.
package methods

import (
	"strings"

	"tdsc/internal/denoise"
	"tdsc/internal/methods/ksvd"
	"tdsc/internal/methods/lrta"
	"tdsc/internal/methods/nonlocal"
	"tdsc/internal/methods/parafac"
	"tdsc/internal/methods/tensr"
	"tdsc/internal/methods/twodsc"
	"tdsc/internal/option"
)

// registry lists the methods, the default first.
var registry = []denoise.Spec{
	nonlocal.Spec,
	twodsc.Spec,
	ksvd.BandSpec,
	ksvd.Spec3D,
	lrta.Spec,
	parafac.Spec,
	tensr.Spec,
	twodsc.SCSpec,
}

// All returns the methods, the default first.
func All() []denoise.Spec { return registry }

// Default returns the method used when none is named.
func Default() denoise.Spec { return registry[0] }

// Names returns the names of every method, in the registry's order.
func Names() []string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = s.Name
	}
	return names
}

// Lookup returns the method called name, or an *option.Error for the field
// "method" that lists the known names.
func Lookup(name string) (denoise.Spec, error) {
	for _, s := range registry {
		if s.Name == name {
			return s, nil
		}
	}
	return denoise.Spec{}, option.Errorf("method", name, "unknown method %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Trainer returns the first method that learns its dictionary on its own
// (tdsc train), and the Trainer.
func Trainer() (denoise.Spec, *denoise.Trainer) {
	for _, s := range registry {
		if s.Train != nil {
			return s, s.Train
		}
	}
	panic("methods: no method of the registry trains a dictionary")
}
