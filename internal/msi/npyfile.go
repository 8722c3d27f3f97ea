package msi

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"tdsc/internal/atomicfile"
	"tdsc/internal/formats/npy"
)

// readNPY reads the 3-D array of the .npy file at path as a cube whose axes
// are stored in the order axes (see ParseAxes), and returns it with its
// element type's name. Values are as stored (no scale applied).
//
// C order (fortran_order False, NumPy's default) means the last dimension
// varies fastest; Fortran order the first. Either is read; the axes string
// names the dimensions of the shape in both cases, as NumPy reports them.
// A PyTorch-style cube of shape (B, H, W) is read with axes "BHW".
func readNPY(path, axes string) (*Cube, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	return decodeNPY(data, axes, path)
}

// decodeNPY decodes the bytes of a .npy file; name is the file's name for
// errors.
func decodeNPY(data []byte, axes, name string) (*Cube, string, error) {
	h, err := npy.ReadHeader(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", name, err)
	}
	if len(h.Shape) != 3 {
		return nil, "", fmt.Errorf("%s: the array is %d-D (shape %s); a cube needs 3 dimensions (%s)", name, len(h.Shape), shapeText(h.Shape), axes)
	}
	for _, d := range h.Shape {
		if d == 0 {
			return nil, "", fmt.Errorf("%s: the array is empty (shape %s)", name, shapeText(h.Shape))
		}
	}
	n, _ := h.Values()
	want := n * h.Size
	got := len(data) - h.DataOffset
	if got < want {
		return nil, "", fmt.Errorf("%s: truncated: shape %s of %s needs %d bytes of data, the file has %d", name, shapeText(h.Shape), h.Descr(), want, got)
	}
	if got > want {
		return nil, "", fmt.Errorf("%s: %d bytes after the data of shape %s of %s (%d bytes): not a single .npy array", name, got-want, shapeText(h.Shape), h.Descr(), want)
	}
	var t elemType
	switch {
	case h.Kind == npy.Float && h.Size == 4:
		t = typeFloat32
	case h.Kind == npy.Float:
		t = typeFloat64
	case h.Kind == npy.Unsigned && h.Size == 1:
		t = typeUint8
	case h.Kind == npy.Unsigned:
		t = typeUint16
	default:
		t = typeInt16
	}
	l := arrayLayout([3]int(h.Shape), axes, h.Fortran)
	c, err := decodeArray(data[h.DataOffset:], l, h.Size, t.float, decoder(byte(h.Kind), h.Size, h.Order()))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", name, err)
	}
	return c, t.name, nil
}

// shapeText formats dimensions as NumPy prints a shape, "(4, 5, 3)".
func shapeText(dims []int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = fmt.Sprint(d)
	}
	if len(dims) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// writeNPY writes c divided by scale to path as a .npy array of element
// type t (little-endian), C order, with the dimensions in the order axes.
// It returns the number of values clipped to an integer type's range.
func writeNPY(path string, c *Cube, axes string, t elemType, scale float64, force bool) (int, error) {
	dims := [3]int{}
	for k := range 3 {
		switch axes[k] {
		case 'H':
			dims[k] = c.Height
		case 'W':
			dims[k] = c.Width
		case 'B':
			dims[k] = c.Bands
		}
	}
	raw, clipped, err := encodeArray(c, arrayLayout(dims, axes, false), t, scale)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	h := npy.Header{Shape: dims[:]}
	switch t {
	case typeFloat32, typeFloat64:
		h.Kind = npy.Float
	case typeInt16:
		h.Kind = npy.Signed
	default:
		h.Kind = npy.Unsigned
	}
	h.Size = t.size
	f, err := atomicfile.Create(path, force)
	if err != nil {
		return 0, err
	}
	if _, err := npy.WriteHeader(f, h); err != nil {
		f.Abort()
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	if _, err := f.Write(raw); err != nil {
		f.Abort()
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	return clipped, atomicfile.Commit(f)
}
