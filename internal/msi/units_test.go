package msi

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAutoScale checks the automatic rule of units for every kind of
// element type (named as NumPy names them; the rule sees only whether
// they are floats) and largest value.
func TestAutoScale(t *testing.T) {
	for _, tc := range []struct {
		dtype string
		max   float64
		want  float64
	}{
		{"uint8", 255, 1},
		{"uint8", 0, 1},
		{"uint16", 255, 1},
		{"uint16", 256, 255.0 / 511},
		{"uint16", 1023, 255.0 / 1023},
		{"uint16", 4000, 255.0 / 4095},
		{"uint16", 4095, 255.0 / 4095},
		{"uint16", 4096, 255.0 / 8191},
		{"uint16", 65535, 255.0 / 65535},
		{"int16", 32767, 255.0 / 32767},
		{"int16", -5, 1},
		{"float32", 1, 255},
		{"float32", 0.2, 255},
		{"float64", -3, 255},
		{"float64", 1.3, 255},
		{"float64", 2, 255},
		{"float64", 2.0001, 1},
		{"float64", 255, 1},
		{"float64", 255.5, 1},
		{"float32", 1e6, 1},
		{"float16", 1, 255},
		{"float16", 2, 255},
		{"float16", 3, 1},
		{"int8", 127, 1},
		{"int32", 65535, 255.0 / 65535},
		{"int32", 4095, 255.0 / 4095},
		{"int64", 65535, 255.0 / 65535},
		{"int64", 200, 1},
		{"uint32", 1 << 20, 255.0 / (1<<21 - 1)},
		{"uint64", math.MaxUint32, 255.0 / math.MaxUint32},
	} {
		if got, _ := AutoScale(strings.HasPrefix(tc.dtype, "float"), tc.max); got != tc.want {
			t.Errorf("AutoScale(%s, %v) = %v, want %v", tc.dtype, tc.max, got, tc.want)
		}
	}
	// The full-scale value of the chosen depth lands on 255, and the
	// largest value at most on it, for any maximum.
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		m := math.Exp2(rng.Float64()*40) + 255
		s, _ := AutoScale(false, m)
		full := 255 / s
		if m*s > 255*(1+1e-12) || math.Abs(full-math.Round(full)) > 1e-6*full || full > 2*m+1 {
			t.Fatalf("max %v: scale %v, full scale %v", m, s, full)
		}
	}
}

// TestAutoScaleUnits checks the phrase said of each branch of the rule.
func TestAutoScaleUnits(t *testing.T) {
	for _, tc := range []struct {
		float   bool
		largest float64
		want    string
	}{
		{true, 0.93, "[0, 1] reflectance ×255 (auto: floats up to 2, largest value 0.93)"},
		{true, 312.4, "×1, taken as on the [0, 255] scale (auto: floats over 2, largest value 312.4)"},
		{false, 200, "×1 (auto: integers up to 255, largest value 200)"},
		{false, 4000, "12-bit counts ×255/4095 (auto: integers over 255, largest value 4000)"},
	} {
		if _, got := AutoScale(tc.float, tc.largest); got != tc.want {
			t.Errorf("AutoScale(%v, %v) says %q, want %q", tc.float, tc.largest, got, tc.want)
		}
	}
}

// TestReflectanceFactor checks that the factor recorded for a scale reads
// back as the same scale, for the scales a read finds (an n-bit rule, a
// factor read from a header) and given ones.
func TestReflectanceFactor(t *testing.T) {
	for _, f := range []float64{1, 255, 10000, 4095, 65535, 16383, 1e-3, 850} {
		s, units := ReflectanceScale(f)
		if got := ReflectanceFactor(s); got != f {
			t.Errorf("factor %v: scale %v records %v", f, s, got)
		}
		if back, _ := ReflectanceScale(ReflectanceFactor(s)); back != s {
			t.Errorf("factor %v: scale %v reads back as %v", f, s, back)
		}
		if !strings.Contains(units, "reflectance scale factor") {
			t.Errorf("factor %v: %q", f, units)
		}
	}
	for bits := 9; bits <= 32; bits++ {
		s, _ := AutoScale(false, math.Exp2(float64(bits))-1)
		if back, _ := ReflectanceScale(ReflectanceFactor(s)); back != s {
			t.Errorf("%d-bit counts: scale %v reads back as %v", bits, s, back)
		}
	}
}

// TestUnrecordedScale checks the scale a format without a record of it
// stores float and integer outputs with.
func TestUnrecordedScale(t *testing.T) {
	counts := 255.0 / 4095
	for _, tc := range []struct {
		o     WriteOptions
		float bool
		want  float64
	}{
		{WriteOptions{}, true, 1},
		{WriteOptions{Scale: 1}, true, 1},
		{WriteOptions{Scale: 255}, true, 255},
		{WriteOptions{Scale: counts}, true, 255},                // counts as a fraction of the full scale
		{WriteOptions{Scale: counts}, false, counts},            // an integer output keeps the counts
		{WriteOptions{Scale: 0.3, ScaleGiven: true}, true, 0.3}, // given: the input's units
	} {
		if got := tc.o.UnrecordedScale(tc.float); got != tc.want {
			t.Errorf("%+v, float %v: %v, want %v", tc.o, tc.float, got, tc.want)
		}
	}
}

// TestLike checks that an output is stored like its input.
func TestLike(t *testing.T) {
	s := Storage{Format: "envi", DType: "int16", Axes: "BHW", Scale: 0.5, ScaleGiven: true, Gains: []float64{2}, Offsets: []float64{1}}
	o := WriteOptions{DType: "float64"}.Like(s, false)
	if o.Axes != "BHW" || o.Scale != 0.5 || !o.ScaleGiven || o.Gains[0] != 2 || o.Offsets[0] != 1 || o.DType != "float64" {
		t.Errorf("%+v", o)
	}
	if o := (WriteOptions{}).Like(s, true); o.DType != "int16" {
		t.Errorf("keeping the element type: %+v", o)
	}
}

func TestMissingAndLargest(t *testing.T) {
	c := NewCube(1, 4, 1)
	copy(c.Data, []float64{3, math.NaN(), -1, math.NaN()})
	if n := c.Missing(); n != 2 {
		t.Errorf("Missing = %d", n)
	}
	if m := Largest(c.Data); m != 3 {
		t.Errorf("Largest = %v", m)
	}
	if m := Largest([]float64{math.NaN()}); !math.IsInf(m, -1) {
		t.Errorf("Largest of nothing = %v", m)
	}
}

func TestTypeScale(t *testing.T) {
	if s, units, ok := TypeScale("uint16"); !ok || s != 255.0/65535 || !strings.Contains(units, "full range") {
		t.Errorf("uint16: %v %q %v", s, units, ok)
	}
	for _, dtype := range []string{"uint8", "int16", "int32", "int64", "uint32", "uint64", "float32", "float64", ""} {
		if _, _, ok := TypeScale(dtype); ok {
			t.Errorf("%q: the type alone decides the scale", dtype)
		}
	}
}

// TestAgree: scales found from the values of integers take the earlier
// cube's; of floats taken differently are an error naming --scale; every
// other pair is left as read.
func TestAgree(t *testing.T) {
	ints := func(scale float64) Storage { return Storage{DType: "int16", Scale: scale, FromData: true} }
	floats := func(scale float64) Storage { return Storage{DType: "float32", Scale: scale, FromData: true} }
	for _, c := range []struct {
		name    string
		ref, in Storage
		want    float64
		err     bool
	}{
		{"integers, 15 and 16 bits", ints(255.0 / 32767), ints(255.0 / 65535), 255.0 / 32767, false},
		{"integers, the same", ints(255.0 / 4095), ints(255.0 / 4095), 0, false},
		{"floats, reflectance and [0, 255]", floats(255), floats(1), 0, true},
		{"floats, the same", floats(255), floats(255), 0, false},
		{"floats with gains and integers", Storage{DType: "int16", Gains: []float64{1}, Scale: 255, FromData: true}, ints(255.0 / 511), 0, false},
		{"integers and floats", ints(255.0 / 511), floats(1), 0, false},
		{"stated by the reference's file", Storage{DType: "int16", Scale: 255.0 / 10000}, ints(255.0 / 16383), 255.0 / 10000, false},
		{"stated by the input's file", ints(255.0 / 16383), Storage{DType: "int16", Scale: 255.0 / 10000}, 0, false},
		{"given", ints(255.0 / 511), Storage{DType: "int16", Scale: 2, ScaleGiven: true}, 0, false},
		{"uint16 and int32 counts", Storage{DType: "uint16", Scale: 255.0 / 65535}, Storage{DType: "int32", Scale: 255.0 / 32767, FromData: true}, 255.0 / 65535, false},
		{"a PNG band stack and int32 counts", Storage{Format: "png", Scale: 1}, Storage{DType: "int32", Scale: 255.0 / 32767, FromData: true}, 0, false},
		{"floats and a PNG band stack", Storage{Format: "png", Scale: 1}, floats(1), 0, false},
	} {
		got, err := Agree(c.ref, c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: scale %v, error %v; want %v, an error %v", c.name, got, err, c.want, c.err)
		}
		if err != nil && !strings.Contains(err.Error(), "--scale 255") {
			t.Errorf("%s: %v does not say which --scale", c.name, err)
		}
	}
}
