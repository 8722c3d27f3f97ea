package cmd

import "testing"

func TestRate(t *testing.T) {
	for _, c := range []struct {
		perSecond float64
		unit      string
		want      string
	}{
		{324000.4, "patches", "324000 patches/s"},
		{1, "iterations", "1 iterations/s"},
		{0.25, "iterations", "4.0 s per step"},
	} {
		if got := rate(c.perSecond, c.unit); got != c.want {
			t.Errorf("rate(%v, %q) = %q, want %q", c.perSecond, c.unit, got, c.want)
		}
	}
}
