package formats

import (
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/formats/array"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/testenv/cubetest"
)

// fixture returns the path of a file of testdata/arrays (made by
// scripts/make-fixtures.py).
func fixture(name string) string { return filepath.Join("..", "..", "testdata", "arrays", name) }

// fixtureF is the formula the fixtures hold: f(h, w, b) = 20h + 3w + 7b + 1.
func fixtureF(h, w, b int) float64 { return float64(20*h + 3*w + 7*b + 1) }

// The stored values of each kind of fixture, as make-fixtures.py writes them.
var fixtureValues = map[string]func(h, w, b int) float64{
	"refl":     func(h, w, b int) float64 { return fixtureF(h, w, b) / 100 },
	"u8":       fixtureF,
	"u16":      func(h, w, b int) float64 { return fixtureF(h, w, b) * 700 },
	"i16":      func(h, w, b int) float64 { return fixtureF(h, w, b) - 40 },
	"counts12": func(h, w, b int) float64 { return fixtureF(h, w, b) * 40 },
	"q":        func(h, w, b int) float64 { return fixtureF(h, w, b) / 128 },
}

func TestReadArrayFixtures(t *testing.T) {
	for _, tc := range []struct {
		file, axes, values, dtype, variable string
		scale                               float64 // expected automatic scale
		float32                             bool    // values rounded to float32 in the file
		wavelengths                         bool
	}{
		{file: "refl_f4_c.npy", values: "refl", dtype: "float32", scale: 255, float32: true},
		{file: "refl_f4_f.npy", values: "refl", dtype: "float32", scale: 255, float32: true},
		{file: "refl_f8_be_c.npy", values: "refl", dtype: "float64", scale: 255},
		{file: "counts12_f8_f.npy", values: "counts12", dtype: "float64", scale: 1}, // float counts need an explicit scale
		{file: "u16_c.npy", values: "u16", dtype: "uint16", scale: 255.0 / 65535},
		{file: "u16_be_f.npy", values: "u16", dtype: "uint16", scale: 255.0 / 65535},
		{file: "u8_c.npy", values: "u8", dtype: "uint8", scale: 1},
		{file: "u8_f.npy", values: "u8", dtype: "uint8", scale: 1},
		{file: "i16_c.npy", values: "i16", dtype: "int16", scale: 1},
		{file: "refl_f4_bhw.npy", axes: "BHW", values: "refl", dtype: "float32", scale: 255, float32: true},
		{file: "refl_f4_wbh_f.npy", axes: "wbh", values: "refl", dtype: "float32", scale: 255, float32: true},
		{file: "refl_v5.mat", values: "refl", dtype: "float64", variable: "cube", scale: 255, wavelengths: true},
		{file: "refl_v7z.mat", values: "refl", dtype: "float64", variable: "cube", scale: 255, wavelengths: true},
		{file: "refl_v7z.mat:cube", values: "refl", dtype: "float64", variable: "cube", scale: 255, wavelengths: true},
		{file: "classes_v7z.mat:c_double", values: "refl", dtype: "float64", variable: "c_double", scale: 255},
		{file: "classes_v7z.mat:c_single", values: "refl", dtype: "float32", variable: "c_single", scale: 255, float32: true},
		{file: "classes_v7z.mat:c_uint8", values: "u8", dtype: "uint8", variable: "c_uint8", scale: 1},
		{file: "classes_v7z.mat:c_uint16", values: "u16", dtype: "uint16", variable: "c_uint16", scale: 255.0 / 65535},
		{file: "classes_v7z.mat:c_int16", values: "i16", dtype: "int16", variable: "c_int16", scale: 1},
		{file: "two_cubes.mat:first", values: "refl", dtype: "float64", variable: "first", scale: 255},
		{file: "two_cubes.mat:second", values: "u16", dtype: "uint16", variable: "second", scale: 255.0 / 65535},
		{file: "be.mat:dbl", values: "u8", dtype: "float64", variable: "dbl", scale: 1, wavelengths: true},
		{file: "be.mat:u16", values: "u16", dtype: "uint16", variable: "u16", scale: 255.0 / 65535, wavelengths: true},
		{file: "refl_v73.mat", values: "refl", dtype: "float64", variable: "cube", scale: 255, wavelengths: true},
		{file: "v73_chunked.mat", values: "u16", dtype: "uint16", variable: "u16", scale: 255.0 / 65535},
		{file: "v73_two.mat:first", values: "refl", dtype: "float64", variable: "first", scale: 255},
		{file: "v73_two.mat:second", values: "i16", dtype: "int16", variable: "second", scale: 1},
		{file: "v73_latest.mat", values: "refl", dtype: "float32", variable: "cube", scale: 255, float32: true},
		{file: "v73_compact.mat", values: "u8", dtype: "uint8", variable: "cube", scale: 1},
		{file: "v73_noattr.mat", values: "u16", dtype: "uint16", variable: "cube", scale: 255.0 / 65535},
		// Every other numeric type; 16-bit counts in the wide integers.
		{file: "i8_c.npy", values: "u8", dtype: "int8", scale: 1},
		{file: "i32_c.npy", values: "u16", dtype: "int32", scale: 255.0 / 65535},
		{file: "i64_c.npy", values: "u16", dtype: "int64", scale: 255.0 / 65535},
		{file: "u32_be_c.npy", values: "u16", dtype: "uint32", scale: 255.0 / 65535},
		{file: "u64_f.npy", values: "u16", dtype: "uint64", scale: 255.0 / 65535},
		{file: "q_f2_c.npy", values: "q", dtype: "float16", scale: 255},
		{file: "q_f2_be_f.npy", values: "q", dtype: "float16", scale: 255},
		{file: "types_v7z.mat:c_int8", values: "u8", dtype: "int8", variable: "c_int8", scale: 1},
		{file: "types_v7z.mat:c_int32", values: "u16", dtype: "int32", variable: "c_int32", scale: 255.0 / 65535},
		{file: "types_v7z.mat:c_int64", values: "u16", dtype: "int64", variable: "c_int64", scale: 255.0 / 65535},
		{file: "types_v7z.mat:c_uint32", values: "u16", dtype: "uint32", variable: "c_uint32", scale: 255.0 / 65535},
		{file: "types_v7z.mat:c_uint64", values: "u16", dtype: "uint64", variable: "c_uint64", scale: 255.0 / 65535},
		{file: "classes_v7z.mat:c_int32", values: "u8", dtype: "int32", variable: "c_int32", scale: 1},
		{file: "v73_types.mat:c_int8", values: "u8", dtype: "int8", variable: "c_int8", scale: 1},
		{file: "v73_types.mat:c_int32", values: "u16", dtype: "int32", variable: "c_int32", scale: 255.0 / 65535},
		{file: "v73_types.mat:c_int64", values: "u16", dtype: "int64", variable: "c_int64", scale: 255.0 / 65535},
		{file: "v73_types.mat:c_uint32", values: "u16", dtype: "uint32", variable: "c_uint32", scale: 255.0 / 65535},
		{file: "v73_types.mat:c_uint64", values: "u16", dtype: "uint64", variable: "c_uint64", scale: 255.0 / 65535},
		// HDF5 as h5py writes it: no MATLAB header block, no attributes.
		{file: "h5py_plain.mat", values: "refl", dtype: "float32", variable: "cube", scale: 255, float32: true},
		{file: "h5py_latest.mat", values: "u16", dtype: "int64", variable: "cube", scale: 255.0 / 65535},
		{file: "h5py_types.mat:f16", values: "q", dtype: "float16", variable: "f16", scale: 255},
		{file: "h5py_types.mat:f16_be", values: "q", dtype: "float16", variable: "f16_be", scale: 255},
		{file: "h5py_types.mat:i32", values: "u16", dtype: "int32", variable: "i32", scale: 255.0 / 65535},
		{file: "h5py_types.mat:u64", values: "u16", dtype: "uint64", variable: "u64", scale: 255.0 / 65535},
		// Singleton dimensions dropped: (1, H, W, B) and (H, W, B, 1).
		{file: "refl_f4_1hwb.npy", values: "refl", dtype: "float32", scale: 255, float32: true},
		{file: "u16_hwb1_f.npy", values: "u16", dtype: "uint16", scale: 255.0 / 65535},
		{file: "types_v7z.mat:c_1hwb", values: "refl", dtype: "float64", variable: "c_1hwb", scale: 255},
		{file: "v73_types.mat:c_1hwb", values: "refl", dtype: "float64", variable: "c_1hwb", scale: 255},
		{file: "h5py_types.mat:hwb1", values: "u8", dtype: "uint8", variable: "hwb1", scale: 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			// Stored values, scale 1.
			c, src, variable, err := openSource(fixture(tc.file), msi.ReadOptions{Axes: tc.axes, Scale: 1})
			if err != nil {
				t.Fatal(err)
			}
			wantAxes := strings.ToUpper(tc.axes)
			if wantAxes == "" {
				wantAxes = "HWB"
			}
			if c.Height != 4 || c.Width != 5 || c.Bands != 3 {
				t.Fatalf("size %s, want 4×5×3", c.Size())
			}
			if src.DType != tc.dtype || src.Axes != wantAxes || src.Scale != 1 || variable != tc.variable {
				t.Fatalf("source %+v, want dtype %s, axes %s, scale 1, variable %q", src, tc.dtype, wantAxes, tc.variable)
			}
			value := fixtureValues[tc.values]
			for b := range 3 {
				for y := range 4 {
					for x := range 5 {
						want := value(y, x, b)
						if tc.float32 {
							want = float64(float32(want))
						}
						if got := c.At(y, x, b); got != want {
							t.Fatalf("voxel (%d, %d, %d) = %v, want %v", y, x, b, got, want)
						}
					}
				}
			}
			if got := c.Wavelengths; tc.wavelengths != (got != nil) || tc.wavelengths && !slices.Equal(got, []float64{400, 410, 420}) {
				t.Fatalf("wavelengths %v, want them: %v", got, tc.wavelengths)
			}

			// Automatic scale.
			a, src, _, err := openSource(fixture(tc.file), msi.ReadOptions{Axes: tc.axes})
			if err != nil {
				t.Fatal(err)
			}
			if src.Scale != tc.scale {
				t.Fatalf("automatic scale %v, want %v", src.Scale, tc.scale)
			}
			for i := range a.Data {
				if a.Data[i] != c.Data[i]*tc.scale {
					t.Fatalf("value %d: %v after scaling, want %v × %v", i, a.Data[i], c.Data[i], tc.scale)
				}
			}
		})
	}
}

// randomWhole returns a random cube whose values are whole numbers in
// [lo, hi].
func randomWhole(rng *rand.Rand, h, w, b int, lo, hi float64) *msi.Cube {
	c := msi.NewCube(h, w, b)
	for i := range c.Data {
		c.Data[i] = lo + float64(rng.IntN(int(hi-lo)+1))
	}
	return c
}

func TestArrayRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	for _, ext := range []string{".npy", ".mat"} {
		for _, dtype := range append([]string{""}, array.DTypes...) {
			for _, axes := range []string{"", "HWB", "BHW", "WBH", "HBW", "BWH", "WHB"} {
				for _, scale := range []float64{0, 1, 255, 255.0 / 65535} {
					name := filepath.Join(dir, "x"+dtype+axes+ext)
					c := cubetest.Uniform(rng, 3+rng.IntN(3), 2+rng.IntN(4), 1+rng.IntN(5), 0, 255)
					if rng.IntN(2) == 0 {
						c.Wavelengths = make([]float64, c.Bands)
						for i := range c.Wavelengths {
							c.Wavelengths[i] = 400 + 10.5*float64(i)
						}
					}
					// What the stored values decode to, on the working scale.
					want := c.Clone()
					s := scale
					if s == 0 {
						s = 1
					}
					for i, v := range want.Data {
						stored := v / s
						switch dtype {
						case "", "float32":
							stored = float64(float32(stored))
						case "uint8":
							stored = math.Max(0, math.Min(255, math.Round(stored)))
						case "uint16":
							stored = math.Max(0, math.Min(65535, math.Round(stored)))
						case "int16":
							stored = math.Max(-32768, math.Min(32767, math.Round(stored)))
						case "int8":
							stored = math.Max(-128, math.Min(127, math.Round(stored)))
						case "int32":
							stored = math.Max(math.MinInt32, math.Min(math.MaxInt32, math.Round(stored)))
						case "uint32":
							stored = math.Max(0, math.Min(math.MaxUint32, math.Round(stored)))
						}
						want.Data[i] = stored * s
					}
					if ext == ".npy" {
						want.Wavelengths = nil
					}
					// A given scale: the output holds the input's units
					// whatever they are (see TestFloatCountsAsFraction).
					info, err := Write(name, c, msi.WriteOptions{Axes: axes, DType: dtype, Scale: scale, ScaleGiven: true, Force: true})
					if err != nil {
						t.Fatalf("%s %s %s: %v", ext, dtype, axes, err)
					}
					if info.Clipped != 0 && (dtype == "" || strings.HasPrefix(dtype, "float")) {
						t.Fatalf("%s: %d clipped float values", name, info.Clipped)
					}
					got, err := OpenWith(name, msi.ReadOptions{Axes: axes, Scale: s})
					src := got.Stored
					if err != nil {
						t.Fatal(err)
					}
					wantDType := dtype
					if wantDType == "" {
						wantDType = "float32"
					}
					if src.DType != wantDType || src.Scale != s {
						t.Fatalf("%s: source %+v, want dtype %s scale %v", name, src, wantDType, s)
					}
					if !got.SameSize(c) || !slices.Equal(got.Wavelengths, want.Wavelengths) {
						t.Fatalf("%s: read %s with wavelengths %v, wrote %s with %v", name, got.Size(), got.Wavelengths, c.Size(), want.Wavelengths)
					}
					for i := range got.Data {
						if got.Data[i] != want.Data[i] {
							t.Fatalf("%s (axes %q, scale %v): value %d = %v, want %v (written %v)", name, axes, scale, i, got.Data[i], want.Data[i], c.Data[i])
						}
					}
				}
			}
		}
	}
}

// TestWriteLikeSource reads each fixture with the automatic scale and writes
// it back like its source with its own element type: the stored values must
// come back exactly.
func TestWriteLikeSource(t *testing.T) {
	dir := t.TempDir()
	for _, file := range []string{"u16_be_f.npy", "refl_f4_bhw.npy", "i16_c.npy", "refl_v7z.mat", "classes_v7z.mat:c_uint16", "be.mat:dbl"} {
		axes := ""
		if strings.Contains(file, "bhw") {
			axes = "BHW"
		}
		c, src, variable, err := openSource(fixture(file), msi.ReadOptions{Axes: axes})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := OpenWith(fixture(file), msi.ReadOptions{Axes: axes, Scale: 1})
		if err != nil {
			t.Fatal(err)
		}
		f, _, _ := strings.Cut(file, ":")
		out := filepath.Join(dir, "out"+filepath.Ext(f))
		if _, err := Write(out, c, msi.WriteOptions{Force: true}.Like(src, true)); err != nil {
			t.Fatal(err)
		}
		back, bsrc, bvariable, err := openSource(out, msi.ReadOptions{Axes: src.Axes, Scale: 1})
		if err != nil {
			t.Fatal(err)
		}
		if bsrc.DType != src.DType || bvariable != variable {
			t.Fatalf("%s: wrote %+v, read %+v", file, src, bsrc)
		}
		if !slices.Equal(back.Data, stored.Data) {
			t.Fatalf("%s: stored values changed by reading and writing back", file)
		}
	}
}

func TestWriteMATVariableName(t *testing.T) {
	dir := t.TempDir()
	c := cubetest.Uniform(rand.New(rand.NewPCG(1, 2)), 2, 3, 4, 0, 255)
	for _, tc := range []struct{ path, option, want string }{
		{"a.mat", "", "cube"},
		{"b.mat", "noisy", "noisy"},
		{"c.mat:denoised", "noisy", "denoised"},
	} {
		path := filepath.Join(dir, tc.path)
		named := c.Clone()
		if tc.option != "" {
			named.Fields = []msi.Field{{Format: "mat", Key: "variable", Value: tc.option}}
		}
		if _, err := Write(path, named, msi.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		file, _, _ := strings.Cut(path, ".mat:")
		file = strings.TrimSuffix(file, ".mat") + ".mat"
		if _, err := os.Stat(file); err != nil {
			t.Fatal(err)
		}
		_, _, variable, err := openSource(file, msi.ReadOptions{})
		if err != nil || variable != tc.want {
			t.Fatalf("%s: variable %q (%v), want %q", tc.path, variable, err, tc.want)
		}
		if err := NewTarget(path).Refuse(); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("NewTarget(%s).Refuse() = %v", path, err)
		}
	}
	for _, bad := range []string{"1x", "a b", "wavelengths", strings.Repeat("x", 64)} {
		c := c.Clone()
		c.Wavelengths = []float64{1, 2, 3, 4}
		path := filepath.Join(dir, "bad.mat")
		if _, err := Write(path+":"+bad, c, msi.WriteOptions{}); err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("variable %q: got %v, want an error naming %s", bad, err, path)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("variable %q: %s left behind", bad, path)
		}
	}
}

func TestArrayWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	c := cubetest.Uniform(rand.New(rand.NewPCG(3, 4)), 2, 3, 2, 0, 255)
	for _, name := range []string{"x.npy", "x.mat"} {
		path := filepath.Join(dir, name)
		if _, err := Write(path, c, msi.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(path)
		if _, err := Write(path, c, msi.WriteOptions{}); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("%s: overwrite without force: %v", name, err)
		}
		bad := c.Clone()
		bad.Data[3] = math.Inf(1)
		if _, err := Write(path, bad, msi.WriteOptions{Force: true}); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "band 0, line 1, sample 0") {
			t.Fatalf("%s: +Inf: %v", name, err)
		}
		huge := c.Clone()
		huge.Data[0] = 1e300
		if _, err := Write(path, huge, msi.WriteOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "float32") {
			t.Fatalf("%s: 1e300 as float32: %v", name, err)
		}
		after, _ := os.ReadFile(path)
		if !slices.Equal(before, after) {
			t.Fatalf("%s changed by failed writes", name)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Fatalf("temporary file %s left behind", e.Name())
			}
		}
		info, err := Write(path, randomWhole(rand.New(rand.NewPCG(1, 1)), 2, 2, 2, -300, 300), msi.WriteOptions{Force: true, DType: "uint8"})
		if err != nil || info.Clipped == 0 {
			t.Fatalf("%s: uint8 output of [-300, 300]: clipped %d, %v", name, info.Clipped, err)
		}
	}
}

// truncations returns prefixes of data at several lengths.
func truncations(data []byte) [][]byte {
	var out [][]byte
	for _, n := range []int{0, 3, 7, 9, 11, 60, 100, 127, 129, 135, 140, 200, len(data) / 2, len(data) - 9, len(data) - 1} {
		if n >= 0 && n < len(data) {
			out = append(out, data[:n])
		}
	}
	return out
}

func TestReadArrayTruncated(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"refl_f4_c.npy", "u16_be_f.npy", "refl_v5.mat", "refl_v7z.mat", "be.mat:dbl", "be.mat:u16", "classes_v7z.mat:c_uint16",
		"refl_v73.mat", "v73_chunked.mat", "v73_latest.mat", "v73_compact.mat"} {
		file, variable, _ := strings.Cut(name, ":")
		data, err := os.ReadFile(fixture(file))
		if err != nil {
			t.Fatal(err)
		}
		full, err := OpenWith(fixture(name), msi.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cuts := truncations(data)
		for n := 0; n < len(data); n += 1 + len(data)/97 {
			cuts = append(cuts, data[:n])
		}
		for _, short := range cuts {
			path := filepath.Join(dir, "short"+filepath.Ext(file))
			if err := os.WriteFile(path, short, 0o644); err != nil {
				t.Fatal(err)
			}
			arg := path
			if variable != "" {
				arg += ":" + variable
			}
			c, err := OpenWith(arg, msi.ReadOptions{})
			if err == nil {
				// A cut after everything the variable needs (a later
				// variable, HDF5 bookkeeping) may still read: the same
				// values, then. A .npy file is one array: any cut fails.
				if filepath.Ext(file) == ".npy" || !c.SameSize(full) || !slices.Equal(c.Data, full.Data) {
					t.Fatalf("%s cut to %d bytes: read without error", name, len(short))
				}
				continue
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("%s cut to %d bytes: error %q does not name the file", name, len(short), err)
			}
		}
	}
}

func TestReadArrayErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	matNaN, _ := os.ReadFile(fixture("refl_v5.mat"))
	matNaN = slices.Clone(matNaN)
	// The cube's real part comes first; make its 6th value +Inf (little-endian).
	// The name "cube" is a small element: its 4 bytes, then the real part's tag.
	off := strings.Index(string(matNaN), "cube") + 4 + 8
	copy(matNaN[off+5*8:], []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x7f})
	badDescr := []byte(strings.Replace(string(must(os.ReadFile(fixture("u8_c.npy")))), "|u1", "<c8", 1))
	badVersion := slices.Clone(must(os.ReadFile(fixture("u8_c.npy"))))
	badVersion[6] = 9
	extra := append(slices.Clone(must(os.ReadFile(fixture("u8_c.npy")))), 0)
	badEndian := slices.Clone(must(os.ReadFile(fixture("refl_v5.mat"))))
	badEndian[126] = 'X'
	for _, tc := range []struct {
		path string
		opts msi.ReadOptions
		want string
	}{
		{fixture("plane.npy"), msi.ReadOptions{}, "2-D (shape (4, 5))"},
		{fixture("plane.npy"), msi.ReadOptions{}, "a single band needs a third axis of length 1"},
		{fixture("four_d.npy"), msi.ReadOptions{}, "4-D"},
		{fixture("bool.npy"), msi.ReadOptions{}, `element type "|b1" is bool`},
		{fixture("complex.npy"), msi.ReadOptions{}, `element type "<c8" is complex (complex64): a cube must be real`},
		{write("magic.npy", []byte("NUMPY\x01\x00xxxxxxxxxxxxxxxxxx")), msi.ReadOptions{}, "not a .npy file"},
		{write("empty.npy", nil), msi.ReadOptions{}, "empty file"},
		{write("descr.npy", badDescr), msi.ReadOptions{}, `element type "<c8" is complex`},
		{write("version.npy", badVersion), msi.ReadOptions{}, "version 9.0"},
		{write("extra.npy", extra), msi.ReadOptions{}, "1 bytes after the data"},
		{write("inf.mat", matNaN), msi.ReadOptions{}, "value +Inf at band 0, line 1, sample 1"},
		{fixture("plane.mat"), msi.ReadOptions{}, "no 3-D numeric variable to take as the cube (it holds plane (4×5 double))"},
		{fixture("plane.mat:plane"), msi.ReadOptions{}, "variable plane is 2-D (4×5); a cube needs 3 dimensions (HWB): a single band needs a third axis of length 1"},
		{fixture("two_cubes.mat"), msi.ReadOptions{}, "2 3-D variables, first (4×5×3 double), second (4×5×3 uint16): say which with"},
		{fixture("two_cubes.mat:third"), msi.ReadOptions{}, `no variable "third" (it holds first (4×5×3 double), second (4×5×3 uint16), plane (4×5 double))`},
		{fixture("classes_v7z.mat"), msi.ReadOptions{}, "6 3-D variables"},
		{fixture("classes_v7z.mat:c_complex"), msi.ReadOptions{}, "variable c_complex is complex (4×5×3); a cube must be real"},
		{fixture("classes_v7z.mat:c_logical"), msi.ReadOptions{}, "variable c_logical is logical (4×5×3), true/false rather than numbers"},
		{fixture("h5py_types.mat:mask"), msi.ReadOptions{}, "variable mask is logical (4×5×3)"},
		{fixture("h5py_types.mat:z"), msi.ReadOptions{}, "variable z is complex (4×5×3)"},
		{fixture("h5py_types.mat"), msi.ReadOptions{}, "5 3-D variables, f16 (4×5×3 half), f16_be (4×5×3 half), hwb1 (4×5×3×1 uint8), i32 (4×5×3 int32), u64 (4×5×3 uint64)"},
		{fixture("classes_v7z.mat:note"), msi.ReadOptions{}, "class char"},
		{fixture("v73_latest_chunked.mat"), msi.ReadOptions{}, "variable cube: chunked data with an HDF5 1.10 chunk index (data layout version 4) is not supported; re-saving the file as v7"},
		{fixture("v73_two.mat"), msi.ReadOptions{}, "2 3-D variables, first (4×5×3 double), second (4×5×3 int16)"},
		{fixture("v73_chunked.mat:note"), msi.ReadOptions{}, "class char (1×10)"},
		{fixture("v73_chunked.mat:mask"), msi.ReadOptions{}, "variable mask is logical (4×5×3)"},
		{fixture("v73_chunked.mat:meta"), msi.ReadOptions{}, "class struct (1×1)"},
		{fixture("v73_chunked.mat:nothing"), msi.ReadOptions{}, `no variable "nothing" (it holds mask (4×5×3 logical), meta (1×1 struct), note (1×10 char), u16 (4×5×3 uint16))`},
		{write("magic.mat", []byte(strings.Repeat("x", 200))), msi.ReadOptions{}, "not a MAT-file"},
		{write("endian.mat", badEndian), msi.ReadOptions{}, "endian indicator"},
		{write("x.xyz", []byte("abc")), msi.ReadOptions{}, unknownFormat},
		{fixture("u8_c.npy"), msi.ReadOptions{Axes: "HWH"}, "axes"},
		{fixture("u8_c.npy"), msi.ReadOptions{Scale: -1}, "scale -1"},
		{fixture("u8_c.npy"), msi.ReadOptions{Scale: math.NaN()}, "scale NaN"},
		{filepath.Join("..", "..", "testdata", "balloons_crop128"), msi.ReadOptions{Axes: "BHW"}, "fixed layout"},
		{fixture("missing.mat:cube"), msi.ReadOptions{}, "missing.mat: no such file"},
	} {
		_, err := OpenWith(tc.path, tc.opts)
		file, _, _ := strings.Cut(tc.path, ".mat:")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.path, err, tc.want)
			continue
		}
		var oe *option.Error
		if !errors.As(err, &oe) && !strings.Contains(err.Error(), file) {
			t.Errorf("%s: error %q does not name the file", tc.path, err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// openSource reads the cube at path with opts and returns it with how it
// was stored and, for a MAT-file, the variable read.
func openSource(path string, opts msi.ReadOptions) (*msi.Cube, msi.Storage, string, error) {
	c, err := OpenWith(path, opts)
	if err != nil {
		return nil, msi.Storage{}, "", err
	}
	variable := ""
	for _, f := range c.FieldsOf("mat") {
		if f.Key == "variable" {
			variable = f.Value
		}
	}
	return c, c.Stored, variable, nil
}

// TestFloatCountsAsFraction checks that a float .npy or .mat output of
// n-bit counts, which the file cannot say are counts, holds them as a
// fraction of the full scale and so reads back on the same working scale
// with the automatic rule, as does one of reflectance (scale 255) or of
// [0, 255] values (scale 1); an integer output keeps the counts.
func TestFloatCountsAsFraction(t *testing.T) {
	dir := t.TempDir()
	c := cubetest.Uniform(rand.New(rand.NewPCG(9, 10)), 3, 4, 2, 3, 250)
	for _, ext := range []string{".npy", ".mat"} {
		for _, scale := range []float64{1, 255, 255.0 / 4095, 255.0 / 65535} {
			path := filepath.Join(dir, "f"+ext)
			if _, err := Write(path, c, msi.WriteOptions{Scale: scale, Force: true}); err != nil {
				t.Fatal(err)
			}
			got, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range got.Data {
				if math.Abs(v-c.Data[i]) > 1e-4 {
					t.Fatalf("%s, scale %v: value %d reads back as %v, wrote %v (%s)", ext, scale, i, v, c.Data[i], got.Stored.Units)
				}
			}
		}
		path := filepath.Join(dir, "u"+ext)
		if _, err := Write(path, c, msi.WriteOptions{Scale: 255.0 / 65535, DType: "uint16", Force: true}); err != nil {
			t.Fatal(err)
		}
		got, err := OpenWith(path, msi.ReadOptions{Scale: 1})
		if err != nil || math.Abs(got.Data[0]-math.Round(c.Data[0]*65535/255)) > 0 {
			t.Fatalf("%s uint16: %v stored for %v, %v", ext, got.Data[0], c.Data[0], err)
		}
	}
}

// TestMissingVoxels checks that NaN in an array file, and a missing voxel
// written to one, is a missing voxel, in a file read whole and in windows.
func TestMissingVoxels(t *testing.T) {
	data, err := os.ReadFile(fixture("refl_f8_be_c.npy"))
	if err != nil {
		t.Fatal(err)
	}
	data = slices.Clone(data)
	copy(data[len(data)-8:], []byte{0x7f, 0xf8, 0, 0, 0, 0, 0, 1}) // big-endian NaN in the last value
	dir := t.TempDir()
	path := filepath.Join(dir, "nan.npy")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path)
	if err != nil || c.Missing() != 1 || !math.IsNaN(c.At(3, 4, 2)) || c.Stored.Scale != 255 {
		t.Fatalf("%v missing, voxel %v, scale %v, %v", c.Missing(), c.At(3, 4, 2), c.Stored.Scale, err)
	}
	r, err := openWindow(path, msi.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lines, err := r.ReadLines(3, 1)
	if err != nil || !math.IsNaN(lines.At(0, 4, 2)) {
		t.Fatalf("window: %v, %v", lines, err)
	}
	for _, name := range []string{"out.npy", "out.mat"} {
		out := filepath.Join(dir, name)
		if _, err := Write(out, c, msi.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		back, err := Open(out)
		if err != nil || back.Missing() != 1 || !math.IsNaN(back.At(3, 4, 2)) {
			t.Fatalf("%s: %d missing, %v", name, back.Missing(), err)
		}
	}
	if _, err := Write(filepath.Join(dir, "i.npy"), c, msi.WriteOptions{DType: "uint16"}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("uint16 without a no-data value: %v", err)
	}
}

// TestPNGScale checks that a given scale applies to a band stack's
// samples (16-bit here): working = sample × scale.
func TestPNGScale(t *testing.T) {
	crop := filepath.Join("..", "..", "testdata", "balloons_crop128")
	auto, err := Open(crop)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenWith(crop, msi.ReadOptions{Scale: 2})
	if err != nil || got.Stored.Scale != 2 || !got.Stored.ScaleGiven {
		t.Fatalf("%+v, %v", got.Stored, err)
	}
	for i := range 100 {
		if sample := math.Round(auto.Data[i] * 65535 / 255); math.Abs(got.Data[i]-2*sample) > 1e-9*sample {
			t.Fatalf("voxel %d: %v, want 2 × %v", i, got.Data[i], sample)
		}
	}
	if auto.Stored.Scale != 1 || auto.Stored.Units != "16-bit samples ×255/65535" {
		t.Errorf("automatic: %+v", auto.Stored)
	}
}
