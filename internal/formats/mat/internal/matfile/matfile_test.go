package matfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"cube": true, "a": true, "x_1": true, "A9": true, strings.Repeat("v", 63): true,
		"": false, "1x": false, "_x": false, "a-b": false, "a b": false, "é": false, strings.Repeat("v", 64): false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestTagForms(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		b := make([]byte, 8)
		order.PutUint32(b, 3<<16|uint32(MIInt8))
		copy(b[4:], "abc")
		typ, n, small := tag(b, order)
		if typ != MIInt8 || n != 3 || string(small) != "abc" {
			t.Fatalf("%v small element: %v %d %q", order, typ, n, small)
		}
		order.PutUint32(b, uint32(MIDouble))
		order.PutUint32(b[4:], 4000)
		typ, n, small = tag(b, order)
		if typ != MIDouble || n != 4000 || small != nil {
			t.Fatalf("%v full tag: %v %d %v", order, typ, n, small)
		}
	}
}

// TestWriterRoundTrip writes variables of every numeric class and parses
// them back.
func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "MATLAB 5.0 MAT-file, test")
	if err != nil {
		t.Fatal(err)
	}
	type variable struct {
		name  string
		class Class
		dims  []int
	}
	vars := []variable{{"d", ClassDouble, []int{2, 3, 4}}, {"s", ClassSingle, []int{1, 5}}, {"u8", ClassUint8, []int{3, 1, 2}},
		{"u16", ClassUint16, []int{7, 1}}, {"i16", ClassInt16, []int{1, 1, 1}}, {"long_name_x", ClassInt32, []int{2, 2}}}
	var data [][]byte
	for i, v := range vars {
		n := 1
		for _, d := range v.dims {
			n *= d
		}
		raw := make([]byte, n*classType(v.class).Size())
		for j := range raw {
			raw[j] = byte(i*31 + j)
		}
		data = append(data, raw)
		if err := w.WriteVar(v.name, v.class, v.dims, raw); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len()%8 != 0 || buf.Bytes()[126] != 'I' || buf.Bytes()[127] != 'M' {
		t.Fatalf("%d bytes, endian %q", buf.Len(), buf.Bytes()[126:128])
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Vars) != len(vars) || f.Text != "MATLAB 5.0 MAT-file, test" {
		t.Fatalf("%d variables, text %q", len(f.Vars), f.Text)
	}
	for i, v := range f.Vars {
		got, err := f.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != vars[i].name || got.Class != vars[i].class || !slices.Equal(got.Dims, vars[i].dims) ||
			got.Type != classType(vars[i].class) || !bytes.Equal(got.Data, data[i]) {
			t.Fatalf("variable %d: got %s type %d, wrote %+v", i, got.Describe(), got.Type, vars[i])
		}
	}
	for _, bad := range []struct {
		name  string
		class Class
		dims  []int
		data  []byte
	}{
		{"x", ClassCell, []int{1, 1}, nil},
		{"1x", ClassDouble, []int{1, 1}, make([]byte, 8)},
		{"x", ClassDouble, []int{1}, make([]byte, 8)},
		{"x", ClassDouble, []int{1, 2}, make([]byte, 8)},
	} {
		if err := w.WriteVar(bad.name, bad.class, bad.dims, bad.data); err == nil {
			t.Errorf("WriteVar(%q, %v, %v, %d bytes): no error", bad.name, bad.class, bad.dims, len(bad.data))
		}
	}
}

// FuzzParse parses fuzzed bytes as a MAT-file and loads every variable.
// Nothing may panic; a loaded variable's data must match its dimensions.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "arrays", "*.mat"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// A small uncompressed file, whose every byte the fuzzer can reach.
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, "x")
	w.WriteVar("cube", ClassUint16, []int{2, 1, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	w.WriteVar("wavelengths", ClassDouble, []int{1, 1}, make([]byte, 8))
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		for _, v := range file.Vars {
			got, err := file.Load(v)
			if err != nil {
				continue
			}
			n := 1
			for _, d := range got.Dims {
				n *= d
			}
			if got.Type.ValueSize() == 0 || len(got.Data) != n*got.Type.ValueSize() {
				t.Fatalf("%s: type %d, %d bytes", got.Describe(), got.Type, len(got.Data))
			}
		}
	})
}

// FuzzParseHDF5 parses fuzzed bytes as an HDF5 file without MATLAB's
// header block (as h5py writes it) and the same bytes behind the header
// (as MATLAB does). Nothing may panic, and a file read without the header
// must read with it too, the same variables with the same values:
// addresses are relative to the superblock wherever it is. (Not the other
// way round: behind the header, a base address of 512 is accepted.)
func FuzzParseHDF5(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "..", "testdata", "arrays", "*.mat"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		switch {
		case bytes.HasPrefix(data, []byte(hdf5Signature)):
			f.Add(data)
		case len(data) > v73Offset && bytes.HasPrefix(data[v73Offset:], []byte(hdf5Signature)):
			f.Add(data[v73Offset:])
		}
	}
	header, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "testdata", "arrays", "refl_v73.mat"))
	if err != nil {
		f.Fatal(err)
	}
	header = header[:v73Offset]
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasPrefix(data, []byte(hdf5Signature)) {
			return
		}
		plain, plainErr := Parse(data)
		mat, matErr := Parse(append(slices.Clone(header), data...))
		if plainErr != nil {
			return
		}
		if matErr != nil {
			t.Fatalf("read without the header, not with it: %v", matErr)
		}
		if len(plain.Vars) != len(mat.Vars) {
			t.Fatalf("%d variables without the header, %d with it", len(plain.Vars), len(mat.Vars))
		}
		for i, v := range plain.Vars {
			w := mat.Vars[i]
			if v.Describe() != w.Describe() {
				t.Fatalf("variable %d: %s without the header, %s with it", i, v.Describe(), w.Describe())
			}
			a, aErr := plain.Load(v)
			b, bErr := mat.Load(w)
			if (aErr == nil) != (bErr == nil) {
				t.Fatalf("%s: %v without the header, %v with it", v.Describe(), aErr, bErr)
			}
			if aErr != nil {
				continue
			}
			n := 1
			for _, d := range a.Dims {
				n *= d
			}
			if a.Type != b.Type || !bytes.Equal(a.Data, b.Data) || a.Type.ValueSize() == 0 || len(a.Data) != n*a.Type.ValueSize() {
				t.Fatalf("%s: type %d, %d bytes without the header, type %d, %d bytes with it", v.Describe(), a.Type, len(a.Data), b.Type, len(b.Data))
			}
		}
	})
}
