package gray

import (
	"context"
	"errors"
	"testing"

	"tdsc/internal/option"
	"tdsc/internal/tsc"
)

func TestAtomsOptionsValidate(t *testing.T) {
	good := AtomsOptions{
		Layout:  Layout{Model: TwoD, D: 4},
		Samples: 20,
		Learn:   tsc.LearnOptions{Atoms: 5, Beta: 0.1, Iters: 1, InnerIters: 1},
	}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	for _, c := range []struct {
		field string
		edit  func(o *AtomsOptions)
	}{
		{"model", func(o *AtomsOptions) { o.Model = 7 }},
		{"patch", func(o *AtomsOptions) { o.D = 1 }},
		{"samples", func(o *AtomsOptions) { o.Samples = 0 }},
		{"samples", func(o *AtomsOptions) { o.Samples = 4 }},
		{"threads", func(o *AtomsOptions) { o.Learn.Threads = -1 }},
		{"atoms", func(o *AtomsOptions) { o.Learn.Atoms = 0 }},
		{"beta", func(o *AtomsOptions) { o.Learn.Beta = -1 }},
		{"iters", func(o *AtomsOptions) { o.Learn.Iters = 0 }},
		{"inner-iters", func(o *AtomsOptions) { o.Learn.InnerIters = 0 }},
	} {
		o := good
		c.edit(&o)
		err := o.Validate()
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%s: got %v, want an *option.Error for %s", c.field, err, c.field)
		}
		if _, err := Atoms(context.Background(), nil, o, "test"); !errors.As(err, &oe) {
			t.Errorf("Atoms with a bad %s: %v", c.field, err)
		}
	}
}
