package npy

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteReadHeader(t *testing.T) {
	for _, h := range []header{
		{Kind: kindFloat, Size: 4, Shape: []int{4, 5, 3}},
		{Kind: kindFloat, Size: 8, BigEndian: true, Fortran: true, Shape: []int{512, 512, 31}},
		{Kind: kindUnsigned, Size: 1, Shape: []int{7}},
		{Kind: kindSigned, Size: 2, Shape: []int{}},
		{Kind: kindUnsigned, Size: 2, BigEndian: true, Shape: []int{1, 2, 3, 4}},
	} {
		var buf bytes.Buffer
		n, err := writeHeader(&buf, h)
		if err != nil || n != buf.Len() {
			t.Fatal(n, err)
		}
		if buf.Len()%64 != 0 || buf.Bytes()[buf.Len()-1] != '\n' {
			t.Fatalf("%v: header of %d bytes, not a multiple of 64 ending in a newline", h, buf.Len())
		}
		got, err := readHeader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got.Descr() != h.Descr() || got.Fortran != h.Fortran || !slices.Equal(got.Shape, h.Shape) || got.DataOffset != n {
			t.Fatalf("wrote %+v, read %+v", h, got)
		}
	}
}

// TestNumPyHeaderText checks the header text against what np.save writes.
func TestNumPyHeaderText(t *testing.T) {
	var buf bytes.Buffer
	if _, err := writeHeader(&buf, header{Kind: kindFloat, Size: 4, Shape: []int{4, 5, 3}}); err != nil {
		t.Fatal(err)
	}
	want := "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4, 5, 3), }" + strings.Repeat(" ", 55) + "\n"
	if buf.String() != want {
		t.Fatalf("got %q\nwant %q", buf.String(), want)
	}
}

func TestParseHeaderVariants(t *testing.T) {
	for _, tc := range []struct {
		text  string
		shape []int
		descr string
	}{
		{`{"descr": ">u2", "fortran_order": True, "shape": (3L, 4L, 5L)}`, []int{3, 4, 5}, ">u2"},
		{"{'descr':'|u1','fortran_order':False,'shape':(2,),}   \n", []int{2}, "|u1"},
		{"{'shape': (), 'fortran_order': False, 'descr': '<i2', }", []int{}, "<i2"},
		{"{'descr': '<u1', 'fortran_order': False, 'shape': (1, 1, 1), }", []int{1, 1, 1}, "|u1"},
	} {
		h, err := parseHeader([]byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if !slices.Equal(h.Shape, tc.shape) || h.Descr() != tc.descr {
			t.Fatalf("%s: shape %v descr %s", tc.text, h.Shape, h.Descr())
		}
	}
}

func TestHeaderErrors(t *testing.T) {
	v2 := []byte(magic + "\x02\x00")
	v2 = binary.LittleEndian.AppendUint32(v2, 1<<30)
	for _, tc := range []struct {
		data, want string
	}{
		{"", "empty file"},
		{"\x93NUM", "truncated"},
		{"PK\x03\x04zzzzzzz", "not a .npy file"},
		{magic + "\x01\x00", "truncated in the header length"},
		{magic + "\x01\x00\x50\x00{'descr'", "truncated: the header says it is 80 bytes, only 8 follow"},
		{magic + "\x04\x00\x00\x00", "version 4.0"},
		{string(v2), "implausibly large"},
	} {
		_, err := readHeader(strings.NewReader(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.data, err, tc.want)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"{'descr': '<f4', 'fortran_order': False}", "no 'shape'"},
		{"{'descr': '<f4', 'shape': (1,)}", "no 'fortran_order'"},
		{"{'fortran_order': False, 'shape': (1,)}", "no 'descr'"},
		{"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", "structured"},
		{"{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}", `unsupported element type "<f16"`},
		{"{'descr': '<u3', 'fortran_order': False, 'shape': (1,)}", `unsupported element type "<u3"`},
		{"{'descr': '<i', 'fortran_order': False, 'shape': (1,)}", `unsupported element type "<i"`},
		{"{'descr': '<f4x', 'fortran_order': False, 'shape': (1,)}", `unsupported element type "<f4x"`},
		{"{'descr': '<c16', 'fortran_order': False, 'shape': (1,)}", `element type "<c16" is complex (complex128)`},
		{"{'descr': '|b1', 'fortran_order': False, 'shape': (1,)}", `element type "|b1" is bool`},
		{"{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (1,)}", "unsupported element type"},
		{"{'descr': '|f4', 'fortran_order': False, 'shape': (1,)}", "only for one-byte types"},
		{"{'descr': '=f4', 'fortran_order': False, 'shape': (1,)}", "byte order"},
		{"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", "want a string, True, False or a tuple"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "non-negative"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999)}", "too large"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 'y'}", "unexpected header key"},
		{"{'descr': '<f4', 'descr': '<f4'}", "appears twice"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "after the closing"},
		{"'descr'", "want '{'"},
	} {
		_, err := parseHeader([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestHeaderAsNumPy compares writeHeader with the header np.save wrote for
// a fixture.
func TestHeaderAsNumPy(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "arrays", "refl_f4_c.npy"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := writeHeader(&buf, header{Kind: kindFloat, Size: 4, Shape: []int{4, 5, 3}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, buf.Bytes()) || len(data) != buf.Len()+4*5*3*4 {
		t.Fatalf("header differs from np.save's:\n%q\n%q", buf.Bytes(), data[:min(len(data), buf.Len())])
	}
}
