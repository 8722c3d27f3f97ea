// Package npy reads and writes cubes as NumPy .npy files (np.save,
// np.load): one 3-D array of any real numeric type (array.TypeOf: float16
// to float64, int8 to int64, uint8 to uint64; bool and complex arrays are
// refused), either byte order, C or Fortran order, with its dimensions in
// any order (ReadOptions.Axes names them in the order of the shape). A
// longer shape whose extra dimensions have length 1 and lead or trail is
// read as 3-D (array.Squeeze). It reads whole files and windows of lines,
// and writes C-order little-endian files of the types of array.DTypes
// whole or a window of lines at a time.
//
// Values are multiplied by a scale on reading, given or chosen by
// msi.AutoScale from the element type and the largest value, and divided
// on writing by the scale msi.WriteOptions.UnrecordedScale gives (a .npy
// file cannot record one). NaN marks a missing voxel. A .npy file carries
// no metadata.
//
// C order (fortran_order False, NumPy's default) means the last dimension
// varies fastest; Fortran order the first. The axes name the dimensions of
// the shape in both cases, as NumPy reports them: a PyTorch-style cube of
// shape (B, H, W) is read with axes "BHW".
package npy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"tdsc/internal/atomicfile"
	"tdsc/internal/formats/array"
	"tdsc/internal/msi"
)

// name is the format's name in Storage.Format.
const name = "npy"

// Format is the .npy format.
var Format msi.Format = format{}

type format struct{}

func (format) Info() msi.Info {
	return msi.Info{Name: name, Label: ".npy", Path: "a .npy", Takes: msi.TakesAxes | msi.TakesDType, Carries: msi.CarriesMissing}
}

// Recognize reports whether path ends in .npy, in any case.
func (format) Recognize(path string) bool { return strings.EqualFold(filepath.Ext(path), ".npy") }

// Outputs returns path.
func (format) Outputs(path string) []string { return []string{path} }

// Open reads the 3-D array of the .npy file at path with its dimensions in
// the order opts.Axes, its values multiplied by opts.Scale or the
// automatic factor. An array larger than opts.Budget is refused before its
// values are read.
func (format) Open(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	axes, err := readChecks(path, opts)
	if err != nil {
		return nil, err
	}
	if err := checkFits(path, axes, opts.Budget); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, dtype, err := decode(data, axes, path)
	if err != nil {
		return nil, err
	}
	scale, units, fromData := array.ApplyScale(c, dtype, opts.Scale)
	c.Stored = msi.Storage{Format: name, DType: dtype, Axes: axes, Scale: scale, ScaleGiven: opts.Scale != 0, FromData: fromData, Units: units}
	return c, nil
}

// checkFits reads the header of the .npy file at path and returns an
// error if the file is no cube or the cube needs more than budget bytes to
// read whole (msi.CheckFits).
func checkFits(path, axes string, budget int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	h, _, err := arrayHeader(f, fi.Size(), axes, path)
	if err != nil {
		return err
	}
	l := array.NewLayout([3]int(h.Shape), axes, h.Fortran)
	return msi.CheckFits(path, l.Height, l.Width, l.Bands, fi.Size(), budget)
}

// readChecks checks what reading path with opts needs and returns the
// axes, parsed.
func readChecks(path string, opts msi.ReadOptions) (string, error) {
	axes, err := array.ParseAxes(opts.Axes)
	if err != nil {
		return "", err
	}
	if err := msi.CheckScale(opts.Scale); err != nil {
		return "", err
	}
	return axes, msi.Exists(path)
}

// Write writes c divided by opts.UnrecordedScale to path as a .npy array
// of element type opts.DType (float32 by default), little-endian, C
// order, with the dimensions in the order opts.Axes. Missing voxels are
// NaN, or c's no-data value in an integer type (see array.Encode).
func (format) Write(path string, c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	if err := c.Check(); err != nil {
		return msi.WriteInfo{}, fmt.Errorf("%s: %v", path, err)
	}
	axes, t, scale, err := writeChecks(opts)
	if err != nil {
		return msi.WriteInfo{}, err
	}
	clipped, err := write(path, c, axes, t, scale, opts)
	return msi.WriteInfo{Clipped: clipped}, err
}

// writeChecks checks the array options of opts and returns the axes, the
// element type and the scale to divide by (opts.UnrecordedScale).
func writeChecks(opts msi.WriteOptions) (string, array.Type, float64, error) {
	axes, err := array.ParseAxes(opts.Axes)
	if err != nil {
		return "", array.Type{}, 0, err
	}
	if err := msi.CheckScale(opts.Scale); err != nil {
		return "", array.Type{}, 0, err
	}
	t, err := array.TypeNamed(opts.DType)
	return axes, t, opts.UnrecordedScale(t.Float), err
}

// arrayHeader reads and checks the header at the start of r, a .npy file
// of size bytes named name: a non-empty array with exactly the data its
// shape needs, 3-D once array.Squeeze has dropped the leading or trailing
// dimensions of length 1 of a longer shape. It returns the header, with
// that 3-D shape, and the element type.
func arrayHeader(r io.Reader, size int64, axes, name string) (header, array.Type, error) {
	h, err := readHeader(r)
	if err != nil {
		return header{}, array.Type{}, fmt.Errorf("%s: %v", name, err)
	}
	stored := h.Shape
	h.Shape = array.Squeeze(h.Shape)
	switch {
	case len(h.Shape) == 2:
		return header{}, array.Type{}, fmt.Errorf("%s: the array is 2-D (shape %s); a cube needs 3 dimensions (%s): a single band needs a third axis of length 1 (x[:, :, None] in NumPy)", name, array.ShapeText(stored), axes)
	case len(h.Shape) != 3:
		return header{}, array.Type{}, fmt.Errorf("%s: the array is %d-D (shape %s); a cube needs 3 dimensions (%s) (leading or trailing dimensions of length 1 are dropped)", name, len(stored), array.ShapeText(stored), axes)
	}
	for _, d := range h.Shape {
		if d == 0 {
			return header{}, array.Type{}, fmt.Errorf("%s: the array is empty (shape %s)", name, array.ShapeText(stored))
		}
	}
	n, _ := h.Values()
	want := int64(n) * int64(h.Size)
	got := size - int64(h.DataOffset)
	if got < want {
		return header{}, array.Type{}, fmt.Errorf("%s: truncated: shape %s of %s needs %d bytes of data, the file has %d", name, array.ShapeText(stored), h.Descr(), want, got)
	}
	if got > want {
		return header{}, array.Type{}, fmt.Errorf("%s: %d bytes after the data of shape %s of %s (%d bytes): not a single .npy array", name, got-want, array.ShapeText(stored), h.Descr(), want)
	}
	t, _ := array.TypeOf(byte(h.Kind), h.Size) // setDescr has checked it
	return h, t, nil
}

// decode decodes the bytes of a .npy file with its dimensions in the
// order axes and returns the cube, values as stored, and its element
// type's name; name is the file's name for errors.
func decode(data []byte, axes, name string) (*msi.Cube, string, error) {
	h, t, err := arrayHeader(bytes.NewReader(data), int64(len(data)), axes, name)
	if err != nil {
		return nil, "", err
	}
	l := array.NewLayout([3]int(h.Shape), axes, h.Fortran)
	c, err := array.Decode(data[h.DataOffset:], l, h.Size, t.Float, array.Decoder(byte(h.Kind), h.Size, h.Order()), 0)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", name, err)
	}
	return c, t.Name, nil
}

// headerFor returns the header of a C-order little-endian array of
// element type t and dimensions dims.
func headerFor(t array.Type, dims [3]int) header {
	h := header{Shape: dims[:], Size: t.Size, Kind: kindUnsigned}
	switch {
	case t.Float:
		h.Kind = kindFloat
	case t == array.Int8 || t == array.Int16 || t == array.Int32:
		h.Kind = kindSigned
	}
	return h
}

// write writes c divided by scale to path as a .npy array of element type
// t (little-endian), C order, with the dimensions in the order axes, as
// opts says (Force, Context: a cancelled context stops it, leaving
// nothing). It returns the number of values clipped to an integer type's
// range.
func write(path string, c *msi.Cube, axes string, t array.Type, scale float64, opts msi.WriteOptions) (int, error) {
	dims := array.Dims(axes, c.Height, c.Width, c.Bands)
	raw, clipped, err := array.Encode(c, array.NewLayout(dims, axes, false), t, scale, 0, c.NoData, c.HasNoData)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	if err := opts.Err(); err != nil { // encoding a large cube takes a while
		return 0, err
	}
	f, err := atomicfile.Create(path, opts.Force)
	if err != nil {
		return 0, err
	}
	if _, err := writeHeader(f, headerFor(t, dims)); err != nil {
		f.Abort()
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	if err := writeChunks(f, raw, opts); err != nil {
		f.Abort()
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return clipped, atomicfile.Commit(f)
}

// chunkBytes is how much writeChunks writes between checks of the
// context: a few milliseconds of disk.
const chunkBytes = 16 << 20

// writeChunks writes raw to w, chunkBytes at a time, and stops with the
// error of opts.Context once it is cancelled.
func writeChunks(w io.Writer, raw []byte, opts msi.WriteOptions) error {
	for len(raw) > 0 {
		if err := opts.Err(); err != nil {
			return err
		}
		n := min(len(raw), chunkBytes)
		if _, err := w.Write(raw[:n]); err != nil {
			return err
		}
		raw = raw[n:]
	}
	return nil
}

// lineRuns returns where lines y0 .. y0+n−1 of an array of dimensions
// dims (axes naming them) lie in its values: runs of length contiguous
// values starting at starts, in the order of the values in the file. Read
// in that order and packed, the runs are the sub-array of those lines,
// laid out as the whole array is with its H dimension n.
//
// The lines are one run when H is the slowest dimension (C order with H
// first, Fortran order with H last), one run per index of the slower
// dimension when H is in the middle, and one run of n values per pair of
// the other indices when H is the fastest (C order with H last, Fortran
// order with H first): those files read a window in many small reads.
func lineRuns(dims [3]int, axes string, fortran bool, y0, n int) (starts []int64, length int) {
	order := [3]int{0, 1, 2} // dimensions from slowest to fastest
	if fortran {
		order = [3]int{2, 1, 0}
	}
	var strides [3]int
	stride := 1
	for i := 2; i >= 0; i-- {
		strides[order[i]] = stride
		stride *= dims[order[i]]
	}
	hAt := strings.IndexByte(axes, 'H')
	var slower []int // dimensions slower than H, slowest first
	for _, k := range order {
		if k == hAt {
			break
		}
		slower = append(slower, k)
	}
	count := 1
	for _, k := range slower {
		count *= dims[k]
	}
	starts = make([]int64, 0, count)
	idx := make([]int, len(slower))
	for range count {
		off := y0 * strides[hAt]
		for i, k := range slower {
			off += idx[i] * strides[k]
		}
		starts = append(starts, int64(off))
		for i := len(idx) - 1; i >= 0; i-- { // the fastest of them first
			idx[i]++
			if idx[i] < dims[slower[i]] {
				break
			}
			idx[i] = 0
		}
	}
	return starts, n * strides[hAt]
}

// windowDims returns dims with the H dimension made n.
func windowDims(dims [3]int, axes string, n int) [3]int {
	dims[strings.IndexByte(axes, 'H')] = n
	return dims
}

// OpenWindow opens the .npy file at path for reading a window of lines at
// a time (see reader).
func (format) OpenWindow(path string, opts msi.ReadOptions) (msi.WindowReader, error) {
	axes, err := readChecks(path, opts)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	h, t, err := arrayHeader(f, fi.Size(), axes, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &reader{path: path, f: f, h: h, t: t, axes: axes, dims: [3]int(h.Shape), scale: opts.Scale, given: opts.Scale != 0, units: msi.GivenScale(opts.Scale),
		value: array.Decoder(byte(h.Kind), h.Size, h.Order())}, nil
}

// reader reads a .npy array a window of lines at a time (msi.WindowReader)
// with the runs of lineRuns, one read each. Values are decoded and scaled
// as Open does, so that a window equals the same lines of Open's cube;
// the automatic scale, which depends on the largest value of the whole
// array, is found by one pass over the file when first needed.
type reader struct {
	path  string
	f     *os.File
	h     header
	t     array.Type
	axes  string
	dims  [3]int
	value array.DecodeFunc
	scale float64 // 0 until the automatic scale is found
	given bool    // the scale was given (ReadOptions.Scale)
	auto  bool    // the scale was found from the values (msi.Storage.FromData)
	units string  // how scale was found (msi.Storage.Units)
	raw   []byte  // the bytes of the last window, reused
}

// Size returns the cube's height, width and band count.
func (r *reader) Size() (height, width, bands int) {
	l := array.NewLayout(r.dims, r.axes, r.h.Fortran)
	return l.Height, l.Width, l.Bands
}

// Metadata returns the cube's Storage (a .npy file has no other
// metadata), finding the automatic scale if it is not known yet.
func (r *reader) Metadata() (msi.Metadata, error) {
	if err := r.Prepare(context.Background(), nil); err != nil {
		return msi.Metadata{}, err
	}
	return msi.Metadata{Stored: msi.Storage{Format: name, DType: r.t.Name, Axes: r.axes, Scale: r.scale, ScaleGiven: r.given, FromData: r.auto, Units: r.units}}, nil
}

// passBytes is the size of the reads of findScale's pass.
const passBytes = 1 << 20

// Prepare sets r.scale to the factor its element type decides
// (msi.TypeScale), else msi.AutoScale's for the type and the largest value
// (NaN, missing, aside), read in one pass over the file, unless it is set;
// a cancelled ctx stops the pass with its error; progress (if not nil) is
// called with the share of the height read (the file is read in its
// order, whatever its axes). An infinite value is an error naming its
// place, as Open's.
func (r *reader) Prepare(ctx context.Context, progress func(lines int)) error {
	if r.scale != 0 {
		return nil
	}
	if s, units, ok := msi.TypeScale(r.t.Name); ok {
		r.scale, r.units = s, units
		return nil
	}
	n, _ := r.h.Values()
	height, _, _ := r.Size()
	size := r.h.Size
	buf := make([]byte, passBytes/size*size)
	largest := math.Inf(-1)
	for i := 0; i < n; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if progress != nil {
			progress(int(int64(i) * int64(height) / int64(n)))
		}
		k := min(n-i, len(buf)/size)
		chunk := buf[:k*size]
		if _, err := r.f.ReadAt(chunk, int64(r.h.DataOffset)+int64(i)*int64(size)); err != nil {
			return fmt.Errorf("%s: %v", r.path, err)
		}
		for j := range k {
			v := r.value(chunk[j*size:])
			if math.IsInf(v, 0) {
				y, x, b := r.place(i + j)
				return fmt.Errorf("%s: value %v at band %d, line %d, sample %d (from 0): infinite values are not supported (NaN marks a missing value)", r.path, v, b, y, x)
			}
			if r.t.Float && msi.Implausible(v) {
				y, x, b := r.place(i + j)
				return fmt.Errorf("%s: %w", r.path, msi.ImplausibleError(v, b, y, x))
			}
			if v > largest {
				largest = v
			}
		}
		i += k
	}
	if progress != nil {
		progress(height)
	}
	r.scale, r.units = msi.AutoScale(r.t.Float, largest)
	r.auto = true
	return nil
}

// place returns the line, sample and band of the i-th value of the file.
func (r *reader) place(i int) (y, x, b int) {
	var idx [3]int
	if r.h.Fortran {
		for k := range 3 {
			idx[k], i = i%r.dims[k], i/r.dims[k]
		}
	} else {
		for k := 2; k >= 0; k-- {
			idx[k], i = i%r.dims[k], i/r.dims[k]
		}
	}
	for k := range 3 {
		switch r.axes[k] {
		case 'H':
			y = idx[k]
		case 'W':
			x = idx[k]
		case 'B':
			b = idx[k]
		}
	}
	return y, x, b
}

// ReadLines returns lines y0 .. y0+n−1 of the cube on the working scale.
func (r *reader) ReadLines(y0, n int) (*msi.Cube, error) {
	height, _, _ := r.Size()
	if n < 1 || y0 < 0 || y0 > height-n {
		return nil, fmt.Errorf("%s: lines [%d, %d) are outside the cube's %d lines", r.path, y0, y0+n, height)
	}
	if err := r.Prepare(context.Background(), nil); err != nil {
		return nil, err
	}
	starts, length := lineRuns(r.dims, r.axes, r.h.Fortran, y0, n)
	size := r.h.Size
	run := length * size
	if block := len(starts) * run; cap(r.raw) < block {
		r.raw = make([]byte, block)
	}
	raw := r.raw[:len(starts)*run]
	for i, s := range starts {
		if _, err := r.f.ReadAt(raw[i*run:(i+1)*run], int64(r.h.DataOffset)+s*int64(size)); err != nil {
			return nil, fmt.Errorf("%s: %v", r.path, err)
		}
	}
	l := array.NewLayout(windowDims(r.dims, r.axes, n), r.axes, r.h.Fortran)
	c, err := array.Decode(raw, l, size, r.t.Float, r.value, y0)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", r.path, err)
	}
	array.Scale(c.Data, r.scale)
	return c, nil
}

// Close closes the file.
func (r *reader) Close() error { return r.f.Close() }

// CreateWindow starts a .npy output written a window of lines at a time
// (see writer), stored as Write stores it with opts.
func (format) CreateWindow(path string, height, width, bands int, meta msi.Metadata, opts msi.WriteOptions) (msi.WindowWriter, error) {
	if height < 1 || width < 1 || bands < 1 {
		return nil, fmt.Errorf("%s: bad cube size %d×%d×%d", path, height, width, bands)
	}
	if err := meta.CheckFor(bands); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	axes, t, scale, err := writeChecks(opts)
	if err != nil {
		return nil, err
	}
	dims := array.Dims(axes, height, width, bands)
	f, err := atomicfile.Create(path, opts.Force)
	if err != nil {
		return nil, err
	}
	offset, err := writeHeader(f, headerFor(t, dims))
	if err != nil {
		f.Abort()
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &writer{path: path, f: f, dims: dims, axes: axes, t: t, scale: scale, width: width, bands: bands,
		offset: int64(offset), lines: msi.NewLines(height), opts: opts, noData: meta.NoData, hasNoData: meta.HasNoData}, nil
}

// writer writes a .npy array a window of lines at a time
// (msi.WindowWriter): the header first, then each window's values encoded
// as Write encodes them and written into the runs of lineRuns, so that
// the file is byte for byte the one Write writes for the whole cube.
type writer struct {
	path         string
	f            *atomicfile.File
	dims         [3]int
	axes         string
	t            array.Type
	scale        float64
	width, bands int
	offset       int64 // of the values
	lines        *msi.Lines
	opts         msi.WriteOptions // its Err stops WriteLines
	// noData is the value of missing voxels in an integer type, when
	// hasNoData (see array.Encode).
	noData    float64
	hasNoData bool
}

// WriteLines writes the lines of c as lines y0 .. y0+c.Height−1, unless
// the writer's context is cancelled.
func (w *writer) WriteLines(c *msi.Cube, y0 int) error {
	if err := w.opts.Err(); err != nil {
		return err
	}
	if c.Width != w.width || c.Bands != w.bands || len(c.Data) != c.Height*c.Width*c.Bands {
		return fmt.Errorf("%s: a block of %s for a cube %d wide with %d bands", w.path, c.Size(), w.width, w.bands)
	}
	if err := w.lines.Check(y0, c.Height); err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	l := array.NewLayout(windowDims(w.dims, w.axes, c.Height), w.axes, false)
	raw, _, err := array.Encode(c, l, w.t, w.scale, y0, w.noData, w.hasNoData)
	if err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	starts, length := lineRuns(w.dims, w.axes, false, y0, c.Height)
	run := length * w.t.Size
	for i, s := range starts {
		if _, err := w.f.WriteAt(raw[i*run:(i+1)*run], w.offset+s*int64(w.t.Size)); err != nil {
			return fmt.Errorf("%s: %v", w.path, err)
		}
	}
	w.lines.Mark(y0, c.Height)
	return nil
}

// SetProcessing does nothing: a .npy file records no history.
func (w *writer) SetProcessing(string) {}

// Commit renames the file into place once every line is written.
func (w *writer) Commit() error {
	if err := w.lines.Done(); err != nil {
		w.Abort()
		return fmt.Errorf("%s: %v", w.path, err)
	}
	return atomicfile.Commit(w.f)
}

// Abort removes the temporary file.
func (w *writer) Abort() { w.f.Abort() }
