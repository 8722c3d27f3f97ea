package array

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

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
		if got := AutoScale(tc.dtype, tc.max); got != tc.want {
			t.Errorf("AutoScale(%s, %v) = %v, want %v", tc.dtype, tc.max, got, tc.want)
		}
	}
	// The full-scale value of the chosen depth lands on 255, and the
	// largest value at most on it, for any maximum.
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		m := math.Exp2(rng.Float64()*40) + 255
		s := AutoScale("uint16", m)
		full := 255 / s
		if m*s > 255*(1+1e-12) || math.Abs(full-math.Round(full)) > 1e-6*full || full > 2*m+1 {
			t.Fatalf("max %v: scale %v, full scale %v", m, s, full)
		}
	}
}

func TestFloat16Value(t *testing.T) {
	for bits, want := range map[uint16]float64{
		0x0000: 0, 0x3c00: 1, 0xc000: -2, 0x3555: 0.333251953125, 0x7bff: 65504, 0xfbff: -65504,
		0x0001: math.Exp2(-24), 0x03ff: 1023 * math.Exp2(-24), 0x0400: math.Exp2(-14), 0x3bff: 1 - math.Exp2(-11),
		0x7c00: math.Inf(1), 0xfc00: math.Inf(-1),
	} {
		if got := Float16Value(bits); got != want {
			t.Errorf("Float16Value(%#04x) = %v, want %v", bits, got, want)
		}
	}
	if got := Float16Value(0x8000); got != 0 || !math.Signbit(got) {
		t.Errorf("Float16Value(0x8000) = %v, want -0", got)
	}
	// Every value against float32's bits: a half-precision number is a
	// float32 with the exponent rebiased and the fraction widened. Finite
	// values increase with their bits, NaNs are NaN.
	prev := math.Inf(-1)
	for b := range 1 << 16 {
		bits := uint16(b)
		got := Float16Value(bits)
		sign, exp, frac := uint32(bits>>15), uint32(bits>>10&0x1f), uint32(bits&0x3ff)
		switch {
		case exp == 0x1f && frac != 0:
			if !math.IsNaN(got) {
				t.Fatalf("%#04x: %v, want NaN", bits, got)
			}
		case exp == 0x1f:
			if !math.IsInf(got, 1-2*int(sign)) {
				t.Fatalf("%#04x: %v, want infinity", bits, got)
			}
		case exp == 0:
			if want := float64(frac) * math.Exp2(-24) * (1 - 2*float64(sign)); got != want {
				t.Fatalf("%#04x: %v, want %v", bits, got, want)
			}
		default:
			want := math.Float32frombits(sign<<31 | (exp+127-15)<<23 | frac<<13)
			if got != float64(want) {
				t.Fatalf("%#04x: %v, want %v", bits, got, want)
			}
		}
		if sign == 0 && exp < 0x1f {
			if got <= prev && b != 0 {
				t.Fatalf("%#04x: %v does not exceed %v", bits, got, prev)
			}
			prev = got
		}
	}
}

func TestSqueeze(t *testing.T) {
	for _, tc := range []struct{ dims, want []int }{
		{[]int{4, 5, 3}, []int{4, 5, 3}},
		{[]int{1, 4, 5, 3}, []int{4, 5, 3}},
		{[]int{4, 5, 3, 1}, []int{4, 5, 3}},
		{[]int{1, 1, 4, 5, 3, 1, 1}, []int{4, 5, 3}},
		{[]int{1, 4, 5, 1}, []int{4, 5, 1}}, // leading first: one band left
		{[]int{1, 1, 1, 1}, []int{1, 1, 1}},
		{[]int{1, 4, 5}, []int{1, 4, 5}}, // 3-D as it is
		{[]int{4, 5}, []int{4, 5}},
		{[]int{4, 1, 5, 3}, []int{4, 1, 5, 3}}, // a middle one stays
		{[]int{2, 4, 5, 3}, []int{2, 4, 5, 3}},
	} {
		if got := Squeeze(tc.dims); !slices.Equal(got, tc.want) {
			t.Errorf("Squeeze(%v) = %v, want %v", tc.dims, got, tc.want)
		}
	}
}

func TestTypes(t *testing.T) {
	for _, name := range strings.Split(ReadTypes, ", ") {
		rt, ok := ReadType(name)
		kind := byte('u')
		switch {
		case rt.Float:
			kind = 'f'
		case strings.HasPrefix(name, "int"):
			kind = 'i'
		}
		if bt, found := TypeOf(kind, rt.Size); !ok || !found || bt != rt {
			t.Errorf("%s: ReadType %+v %v, TypeOf(%c, %d) %+v %v", name, rt, ok, kind, rt.Size, bt, found)
		}
		w := Writable(name)
		wt, err := TypeNamed(w)
		if err != nil || !slices.Contains(DTypes, w) {
			t.Errorf("Writable(%s) = %s: %v", name, w, err)
		}
		if w != name && (wt.Size < rt.Size || !wt.Float) {
			t.Errorf("Writable(%s) = %s, which cannot hold it", name, w)
		}
	}
	if _, ok := TypeOf('b', 1); ok {
		t.Error("TypeOf reads booleans")
	}
	if _, ok := TypeOf('c', 8); ok {
		t.Error("TypeOf reads complex numbers")
	}
}
