package array

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/msi"
)

// TestApplyScale checks that the automatic scale of a cube with missing
// voxels is found from the others (a NaN would otherwise win or lose
// every comparison) and that they stay missing.
func TestApplyScale(t *testing.T) {
	c := msi.NewCube(1, 3, 1)
	copy(c.Data, []float64{0.5, math.NaN(), 0.25})
	scale, units, fromData := ApplyScale(c, "float32", 0)
	if scale != 255 || !fromData || !strings.Contains(units, "largest value 0.5") || c.Data[0] != 127.5 || !math.IsNaN(c.Data[1]) {
		t.Errorf("scale %v (%s, from the data %v), values %v", scale, units, fromData, c.Data)
	}
	c.Data[0] = 4000
	if scale, _, fromData := ApplyScale(c, "int16", 0); scale != 255.0/4095 || !fromData {
		t.Errorf("12-bit counts in int16 with a missing voxel: scale %v, from the data %v", scale, fromData)
	}
	// uint16 is taken at its full range whatever its largest value.
	c.Data[0] = 4000
	if scale, units, fromData := ApplyScale(c, "uint16", 0); scale != 255.0/65535 || fromData || !strings.Contains(units, "full range") {
		t.Errorf("uint16: scale %v (%s), from the data %v", scale, units, fromData)
	}
	if scale, units, fromData := ApplyScale(c, "uint16", 2); scale != 2 || units != "×2 (--scale)" || fromData {
		t.Errorf("given: %v %q %v", scale, units, fromData)
	}
}

// TestEncodeMissing checks how a missing voxel is stored: NaN in a float
// type, the no-data value (as stored, not scaled) in an integer type, and
// an error naming the voxel in an integer type without one; and that
// Decode keeps a NaN and refuses an infinite value.
func TestEncodeMissing(t *testing.T) {
	c := msi.NewCube(1, 2, 1)
	c.Data[0], c.Data[1] = 10, math.NaN()
	l := NewLayout([3]int{1, 2, 1}, DefaultAxes, false)
	raw, _, err := Encode(c, l, Float32, 2, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(raw, l, 4, true, Decoder('f', 4, binary.LittleEndian), 0)
	if err != nil || back.Data[0] != 5 || !math.IsNaN(back.Data[1]) {
		t.Errorf("float32: %v, %v", back, err)
	}
	raw, _, err = Encode(c, l, Int16, 2, 0, -9999, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int16{int16(binary.LittleEndian.Uint16(raw)), int16(binary.LittleEndian.Uint16(raw[2:]))}; got[0] != 5 || got[1] != -9999 {
		t.Errorf("int16 with a no-data value: %v", got)
	}
	if _, _, err := Encode(c, l, Uint8, 1, 7, 0, false); err == nil || !strings.Contains(err.Error(), "band 0, line 7, sample 1 (from 0) is missing") {
		t.Errorf("uint8 without a no-data value: %v", err)
	}
	inf := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.Inf(1))))
	if _, err := Decode(inf, NewLayout([3]int{1, 1, 1}, DefaultAxes, false), 4, true, Decoder('f', 4, binary.LittleEndian), 3); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("infinite value: %v", err)
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
