package formats

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/formats/gdal"
	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

// writeFile writes data to dir/name and returns the path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// unknownFormat is the error of reading an existing file of no format
// (that no driver of GDAL takes either, in the GDAL build).
var unknownFormat = "unknown format"

// windowFormats lists the formats that read and write windows of lines.
var windowFormats = map[bool]string{false: "ENVI and .npy", true: "ENVI, .npy and GDAL"}[gdal.Available]

// samplePaths are an output path of every format, by name.
var samplePaths = map[string]string{"png": "stack", "envi": "cube.hdr", "npy": "cube.npy", "mat": "cube.mat", "hdf5": "cube.h5", "gdal": "cube.tif"}

// utm33 is the WKT of WGS 84 / UTM zone 33N, as GDAL writes it.
const utm33 = `PROJCS["WGS 84 / UTM zone 33N",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AUTHORITY["EPSG","4326"]],PROJECTION["Transverse_Mercator"],PARAMETER["latitude_of_origin",0],PARAMETER["central_meridian",15],PARAMETER["scale_factor",0.9996],PARAMETER["false_easting",500000],PARAMETER["false_northing",0],UNIT["metre",1,AUTHORITY["EPSG","9001"]],AXIS["Easting",EAST],AXIS["Northing",NORTH],AUTHORITY["EPSG","32633"]]`

// fullMetadata returns metadata with every neutral field set, for a cube
// of bands bands.
func fullMetadata(bands int) msi.Metadata {
	m := msi.Metadata{Description: "a scene", NoData: -1, HasNoData: true,
		Georef: &msi.Georef{Transform: [6]float64{500000, 30, 0, 4e6, 0, -30}, Projection: utm33}}
	for b := range bands {
		m.Wavelengths = append(m.Wavelengths, 400+10.5*float64(b))
		m.FWHM = append(m.FWHM, 10+float64(b))
		m.BandNames = append(m.BandNames, "band "+string(rune('A'+b)))
	}
	return m
}

// TestRoundTrip writes a small cube through Write in every registered
// format and reads it back through Open: the same values (as the format
// stores them: whole levels survive every format), and every metadata the
// format says it carries, and the format's name in Stored.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	dir := t.TempDir()
	c := cubetest.Uniform(rng, 3, 4, 2, 0, 255)
	for i := range c.Data {
		c.Data[i] = float64(int(c.Data[i])) // whole levels survive every format exactly
	}
	c.Metadata = fullMetadata(c.Bands)
	for _, f := range All {
		info := f.Info()
		path, ok := samplePaths[info.Name]
		if !ok {
			t.Fatalf("format %s has no sample path in this test", info.Name)
		}
		if readOnly(f) {
			continue // read by the tests of its package
		}
		path = filepath.Join(dir, path)
		if got := ForWrite(path); got.Info().Name != info.Name {
			t.Fatalf("%s is written as %s, want %s", path, got.Info().Name, info.Name)
		}
		if _, err := Write(path, c, msi.WriteOptions{}); err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		got, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		if !got.SameSize(c) || !slices.Equal(got.Data, c.Data) {
			t.Fatalf("%s: values differ from the cube written", info.Name)
		}
		if got.Stored.Format != info.Name {
			t.Errorf("%s: read as %q", info.Name, got.Stored.Format)
		}
		carried := map[msi.Carried]bool{
			msi.CarriesWavelengths: slices.Equal(got.Wavelengths, c.Wavelengths),
			msi.CarriesFWHM:        slices.Equal(got.FWHM, c.FWHM),
			msi.CarriesBandNames:   slices.Equal(got.BandNames, c.BandNames),
			msi.CarriesDescription: got.Description == c.Description,
			msi.CarriesNoData:      got.HasNoData && got.NoData == c.NoData,
			msi.CarriesGeoref:      got.Georef != nil && *got.Georef == *c.Georef,
		}
		for what, kept := range carried {
			if info.Carries&what != 0 && !kept {
				t.Errorf("%s says it carries %v but lost it: %+v", info.Name, got.Present(what), got.Metadata)
			}
		}
		if lost := NewTarget(path).Lost(c); len(lost) != len(c.Present(^info.Carries)) {
			t.Errorf("%s: Lost says %v", info.Name, lost)
		}
		if err := NewTarget(path).Refuse(); !errors.Is(err, fs.ErrExist) {
			t.Errorf("%s: Refuse after writing: %v", info.Name, err)
		}
	}
}

// TestRecognize checks which format reads and writes a path.
func TestRecognize(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "x.npy") // a folder is a stack, whatever its name
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, read, write string }{
		{"a.hdr", "envi", "envi"},
		{"a.IMG", "envi", "envi"},
		{"a.dat", "envi", "png"}, // read as ENVI; written as nothing: CheckName
		{"a.RAW", "envi", "png"},
		{"a.bsq", "envi", "png"},
		{"a.bil", "envi", "png"},
		{"a.bip", "envi", "png"},
		{"a.Npy", "npy", "npy"},
		{"a.mat", "mat", "mat"},
		{"a.mat:cube", "mat", "mat"},
		{"a.png", "png", "png"},
		{folder, "png", "npy"},
		{"denoised", "", "png"},
		{"a.tif", "gdal", "gdal"},
		{"a.h5", "hdf5", "hdf5"},
		{"a.nc:/x/y", "hdf5", "hdf5"},
		{`HDF5:"a.h5"://x`, "gdal", "gdal"},
		{"a.xyz", "", "png"},
	} {
		path := tc.path
		if !filepath.IsAbs(path) && !strings.Contains(path, `"`) {
			path = filepath.Join(dir, path)
		}
		if got := ForWrite(path).Info().Name; got != tc.write {
			t.Errorf("ForWrite(%s) = %s, want %s", tc.path, got, tc.write)
		}
		f, err := ForRead(path)
		switch {
		case tc.read == "" && err == nil:
			t.Errorf("ForRead(%s) = %s, want an error", tc.path, f.Info().Name)
		case tc.read != "" && (err != nil || f.Info().Name != tc.read):
			t.Errorf("ForRead(%s) = %v, %v; want %s", tc.path, f, err, tc.read)
		}
	}
	for _, f := range All {
		if Named(f.Info().Name) != f {
			t.Errorf("Named(%q) is not the format", f.Info().Name)
		}
	}
	if Named("tiff") != nil {
		t.Error("Named(tiff) found a format")
	}
	if got, want := Paths(), "a band-stack folder, an ENVI .hdr, a .npy, a .mat[:VAR], an .h5/.he5/.nc[:/DATASET] or a GeoTIFF .tif"; got != want {
		t.Errorf("Paths() = %q, want %q", got, want)
	}
	if got, want := Labels(msi.TakesAxes), []string{".npy", ".mat", "HDF5", "GDAL"}; !slices.Equal(got, want) {
		t.Errorf("Labels(axes) = %q, want %q", got, want)
	}
	if got, want := WindowLabels(), strings.Split(strings.ReplaceAll(strings.ReplaceAll(windowFormats, ",", ""), " and", ""), " "); !slices.Equal(got, want) {
		t.Errorf("WindowLabels = %q, want %q", got, want)
	}
}

// TestCheckOutput refuses, before anything is written, an output of no
// format, in a folder that does not exist, that exists (without force),
// or too large for its format; and takes the others.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.npy")
	if err := os.WriteFile(existing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dotted := filepath.Join(dir, "run.v2") // an existing folder, whatever its name
	if err := os.Mkdir(dotted, 0o755); err != nil {
		t.Fatal(err)
	}
	big := [3]int{1100, 1100, 450} // 2.2 GB of float32
	for _, tc := range []struct {
		path  string
		size  [3]int
		opts  msi.WriteOptions
		error string // "" for none
	}{
		{"a.npy", big, msi.WriteOptions{}, ""},
		{"a.hdr", big, msi.WriteOptions{}, ""},
		{"denoised", big, msi.WriteOptions{}, ""},
		{"run.v2", big, msi.WriteOptions{Force: true}, ""},
		{"a.mat", [3]int{512, 512, 31}, msi.WriteOptions{}, ""},
		{"a.mat:x", big, msi.WriteOptions{DType: "uint8"}, ""},
		{"a.mat", [3]int{}, msi.WriteOptions{}, ""}, // size not known yet
		{"a.mat:x", big, msi.WriteOptions{}, "a.mat: a 1100×1100×450 cube of float32 is 2.0 GiB, more than a level-5 MAT-file holds"},
		{"a.mat", big, msi.WriteOptions{DType: "float64"}, "write a .npy or an ENVI .hdr, or a narrower element type"},
		{"a.bsq", big, msi.WriteOptions{}, "a.bsq: tdsc writes no .bsq files: an output is a band-stack folder (an existing folder, or a path without an extension), an ENVI .hdr"},
		{"a.h5", big, msi.WriteOptions{}, "does not write them"}, // a format tdsc only reads
		{"a.dat", big, msi.WriteOptions{}, "tdsc writes no .dat files"},
		{"run.v2", big, msi.WriteOptions{}, "run.v2 already exists"},
		{"old.npy", big, msi.WriteOptions{}, "old.npy already exists"},
		{"none/a.npy", big, msi.WriteOptions{}, "none/a.npy: the folder " + filepath.Join(dir, "none") + " does not exist"},
		{"old.npy/a.npy", big, msi.WriteOptions{}, "old.npy is not a folder"},
	} {
		err := CheckOutput(filepath.Join(dir, tc.path), tc.size[0], tc.size[1], tc.size[2], tc.opts)
		switch {
		case tc.error == "" && err != nil:
			t.Errorf("%s: %v", tc.path, err)
		case tc.error != "" && (err == nil || !strings.Contains(err.Error(), tc.error)):
			t.Errorf("%s: got %v, want an error containing %q", tc.path, err, tc.error)
		}
	}
	if _, err := Write(filepath.Join(dir, "b.raw"), msi.NewCube(2, 2, 1), msi.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "tdsc writes no .raw files") {
		t.Errorf("Write(b.raw): %v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 2 {
		t.Errorf("the checks left %d files in the folder, want the 2 made here", len(names))
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	band := writeFile(t, dir, "x_01.png", buf.Bytes())
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "no such file or folder"},
		{filepath.Join(dir, "missing.hdr"), "no such file or folder"},
		{filepath.Join(dir, "missing.npy"), "no such file or folder"},
		{writeFile(t, dir, "cube.tif", []byte("II*")), map[bool]string{false: "this build has no GDAL", true: "Cannot read TIFF header"}[gdal.Available]},
		{writeFile(t, dir, "cube.h5", []byte("\x89HDF")), "no HDF5 signature"},
		{band, "single PNG"},
	} {
		_, err := Open(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s): got %v, want an error naming it and containing %q", tc.path, err, tc.want)
		}
	}
}

// windowCases are cubes in every format that reads windows, in every
// layout it reads: ENVI as Write writes it; .npy in every axis order, C
// and Fortran order (written by hand), float and integer, given and
// automatic scale.
func windowCases(t *testing.T, c *msi.Cube) (paths []string, opts []msi.ReadOptions) {
	t.Helper()
	dir := t.TempDir()
	hdr := filepath.Join(dir, "c.hdr")
	if _, err := Write(hdr, c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	paths, opts = append(paths, hdr, hdr), append(opts, msi.ReadOptions{}, msi.ReadOptions{Scale: 0.5})
	for _, axes := range []string{"HWB", "HBW", "BHW", "WHB", "BWH", "WBH"} {
		for _, dtype := range []string{"float32", "uint16"} {
			p := filepath.Join(dir, axes+dtype+".npy")
			if _, err := Write(p, c, msi.WriteOptions{Axes: axes, DType: dtype, Scale: 1.0 / 255}); err != nil {
				t.Fatal(err)
			}
			paths, opts = append(paths, p, p), append(opts, msi.ReadOptions{Axes: axes}, msi.ReadOptions{Axes: axes, Scale: 3})
			// The same array in Fortran order: NumPy's header flag, and
			// the values transposed (the first index fastest).
			f := filepath.Join(dir, axes+dtype+"_f.npy")
			writeFortran(t, p, f)
			paths, opts = append(paths, f), append(opts, msi.ReadOptions{Axes: axes})
		}
	}
	return paths, opts
}

// writeFortran rewrites the C-order .npy file src as the Fortran-order
// file dst of the same array.
func writeFortran(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "'shape': (")
	j := strings.Index(text[i:], ")")
	var d [3]int
	for k, s := range strings.Split(text[i+len("'shape': ("):i+j], ", ") {
		for _, r := range s {
			d[k] = 10*d[k] + int(r-'0')
		}
	}
	offset := strings.IndexByte(text, '\n') + 1
	size := (len(data) - offset) / (d[0] * d[1] * d[2])
	out := []byte(strings.Replace(text[:offset], "'fortran_order': False", "'fortran_order': True ", 1))
	values := data[offset:]
	fort := make([]byte, len(values))
	for a := range d[0] {
		for b := range d[1] {
			for c := range d[2] {
				from := ((a*d[1]+b)*d[2] + c) * size
				to := ((c*d[1]+b)*d[0] + a) * size
				copy(fort[to:to+size], values[from:from+size])
			}
		}
	}
	if err := os.WriteFile(dst, append(out, fort...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWindowsMatchOpen reads every window of lines of every case with
// OpenWindow and compares it with the same lines of the cube OpenWith
// reads: values, wavelengths and metadata.
func TestWindowsMatchOpen(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	c := cubetest.Uniform(rng, 5, 3, 4, 0, 255)
	for i := range c.Data {
		c.Data[i] = math.Round(c.Data[i])
	}
	c.Wavelengths = []float64{400, 450, 500, 550}
	paths, opts := windowCases(t, c)
	for i, path := range paths {
		whole, err := OpenWith(path, opts[i])
		if err != nil {
			t.Fatal(err)
		}
		r, err := openWindow(path, opts[i])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h, w, b := r.Size(); h != whole.Height || w != whole.Width || b != whole.Bands {
			t.Fatalf("%s: size %d×%d×%d, Open's %s", path, h, w, b, whole.Size())
		}
		for y0 := range whole.Height {
			for n := 1; y0+n <= whole.Height; n++ {
				got, err := r.ReadLines(y0, n)
				if err != nil {
					t.Fatalf("%s: lines %d+%d: %v", path, y0, n, err)
				}
				want := whole.Crop(y0, 0, 0, n, whole.Width, whole.Bands)
				if !slices.Equal(got.Data, want.Data) {
					t.Fatalf("%s %+v: lines [%d, %d): %v, want %v", path, opts[i], y0, y0+n, got.Data, want.Data)
				}
			}
		}
		meta, err := r.Metadata()
		if err != nil || !reflect.DeepEqual(meta.Stored, whole.Stored) || !slices.Equal(meta.Wavelengths, whole.Wavelengths) {
			t.Errorf("%s: window metadata %+v (%v), Open's %+v", path, meta, err, whole.Metadata)
		}
		for _, bad := range [][2]int{{-1, 1}, {0, 0}, {4, 2}, {0, 6}} {
			// The error names the file read (an ENVI cube's data file).
			if _, err := r.ReadLines(bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(path, filepath.Ext(path))) {
				t.Errorf("%s: lines %d+%d: %v", path, bad[0], bad[1], err)
			}
		}
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestCreateWindowMatchesWrite writes a cube a window of lines at a time,
// out of order, in every format that writes windows and every option it
// takes, and compares the files with Write's for the whole cube.
func TestCreateWindowMatchesWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	c := cubetest.Uniform(rng, 7, 3, 4, -20, 300)
	c.Metadata = fullMetadata(c.Bands)
	c.Processing = "tdsc test"
	dir := t.TempDir()
	cases := []struct {
		name string
		opts msi.WriteOptions
	}{{"c.hdr", msi.WriteOptions{}}}
	for _, axes := range []string{"HWB", "HBW", "BHW", "WHB", "BWH", "WBH"} {
		cases = append(cases, struct {
			name string
			opts msi.WriteOptions
		}{axes + ".npy", msi.WriteOptions{Axes: axes, Scale: 255}}, struct {
			name string
			opts msi.WriteOptions
		}{axes + "u8.npy", msi.WriteOptions{Axes: axes, DType: "uint8"}})
	}
	for _, tc := range cases {
		whole := filepath.Join(dir, "whole-"+tc.name)
		if _, err := Write(whole, c, tc.opts); err != nil {
			t.Fatal(err)
		}
		strips := filepath.Join(dir, "strips-"+tc.name)
		meta := c.Metadata
		meta.Processing = ""
		w, err := CreateWindow(strips, c.Height, c.Width, c.Bands, meta, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, blk := range [][2]int{{4, 3}, {0, 2}, {2, 2}} {
			if err := w.WriteLines(c.Crop(blk[0], 0, 0, blk[1], c.Width, c.Bands), blk[0]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteLines(c.Crop(1, 0, 0, 1, c.Width, c.Bands), 1); err == nil {
			t.Errorf("%s: a line written twice was accepted", tc.name)
		}
		w.SetProcessing(c.Processing)
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]string{{whole, strips}} {
			outs := ForWrite(pair[0]).Outputs(pair[0])
			for k, out := range ForWrite(pair[1]).Outputs(pair[1]) {
				a, errA := os.ReadFile(outs[k])
				b, errB := os.ReadFile(out)
				if errA != nil || errB != nil || !bytes.Equal(a, b) {
					t.Errorf("%s differs from Write's %s (%v, %v)", out, outs[k], errA, errB)
				}
			}
		}
	}
}

// TestWindowRefusals checks that formats that cannot read or write windows
// say so, and which can, and that an unfinished window writer leaves
// nothing.
func TestWindowRefusals(t *testing.T) {
	dir := t.TempDir()
	c := msi.NewCube(2, 2, 2)
	stack := filepath.Join(dir, "stack")
	if _, err := Write(stack, c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	matPath := filepath.Join(dir, "c.mat")
	if _, err := Write(matPath, c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{stack, matPath} {
		if _, err := openWindow(path, msi.ReadOptions{}); err == nil || !strings.Contains(err.Error(), "cannot be read in strips of lines ("+windowFormats+" can)") {
			t.Errorf("openWindow(%s): %v", path, err)
		}
		if src, err := NewSource(path, msi.ReadOptions{}); err != nil || src.Windows() == nil {
			t.Errorf("NewSource(%s).Windows() = nil (%v)", path, err)
		}
		out := filepath.Join(dir, "o-"+filepath.Base(path))
		if _, err := CreateWindow(out, 2, 2, 2, msi.Metadata{}, msi.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "cannot be written in strips") {
			t.Errorf("CreateWindow(%s): %v", out, err)
		}
		if err := NewTarget(out).Windows(); err == nil {
			t.Errorf("NewTarget(%s).Windows() = nil", out)
		}
	}
	for _, name := range []string{"w.hdr", "w.npy"} {
		path := filepath.Join(dir, name)
		if err := NewTarget(path).Windows(); err != nil {
			t.Errorf("NewTarget(%s).Windows(): %v", path, err)
		}
		w, err := CreateWindow(path, 2, 2, 2, msi.Metadata{}, msi.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteLines(msi.NewCube(1, 2, 2), 0); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "1 of 2 lines were not written") {
			t.Errorf("%s: Commit with a line missing: %v", name, err)
		}
		if err := NewTarget(path).Refuse(); err != nil {
			t.Errorf("%s: left behind: %v", name, err)
		}
	}
	if _, err := openWindow(filepath.Join(dir, "w.hdr"), msi.ReadOptions{Axes: "BHW"}); err == nil || !strings.Contains(err.Error(), "fixed layout") {
		t.Errorf("axes for an ENVI window: %v", err)
	}
}

// TestWriteCancelled checks that every format's Write, and every window
// writer, stops with the context's error once WriteOptions.Context is
// cancelled, and leaves nothing behind: what an interrupted command
// relies on.
func TestWriteCancelled(t *testing.T) {
	c := cubetest.Uniform(rand.New(rand.NewPCG(5, 6)), 6, 4, 3, 0, 255)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts := msi.WriteOptions{Context: ctx}
	for _, f := range All {
		if readOnly(f) {
			continue
		}
		dir := t.TempDir()
		path := filepath.Join(dir, samplePaths[f.Info().Name])
		if _, err := Write(path, c, opts); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Write with a cancelled context: %v, want context.Canceled", f.Info().Name, err)
		}
		if _, ok := f.(msi.WindowCreator); ok {
			w, err := CreateWindow(path, c.Height, c.Width, c.Bands, msi.Metadata{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.WriteLines(c, 0); !errors.Is(err, context.Canceled) {
				t.Errorf("%s: WriteLines with a cancelled context: %v, want context.Canceled", f.Info().Name, err)
			}
			w.Abort()
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: a cancelled write left %v", f.Info().Name, entries)
		}
	}
}

// TestScaleNote: only an integer array output whose input's scale came
// from its largest value, and whose type does not fix the scale, is said
// to need --scale to read back.
func TestScaleNote(t *testing.T) {
	counts := msi.WriteOptions{DType: "int32", Scale: 255.0 / 32767, ScaleFromData: true}
	if got := ScaleNote("o.npy", counts); !strings.Contains(got, "--scale 0.00778222") {
		t.Errorf("int32 counts in a .npy: %q", got)
	}
	for name, c := range map[string]struct {
		path string
		opts msi.WriteOptions
	}{
		"ENVI, which records it":  {"o.hdr", counts},
		"float32":                 {"o.npy", msi.WriteOptions{Scale: 255.0 / 32767, ScaleFromData: true}},
		"uint16, fixed by type":   {"o.mat", msi.WriteOptions{DType: "uint16", Scale: 255.0 / 32767, ScaleFromData: true}},
		"uint8":                   {"o.npy", msi.WriteOptions{DType: "uint8", Scale: 1, ScaleFromData: true}},
		"stated, not from values": {"o.npy", msi.WriteOptions{DType: "int16", Scale: 255.0 / 10000}},
		"given":                   {"o.npy", msi.WriteOptions{DType: "int16", Scale: 2, ScaleGiven: true, ScaleFromData: true}},
	} {
		if got := ScaleNote(c.path, c.opts); got != "" {
			t.Errorf("%s: %q, want no note", name, got)
		}
	}
}

// openWindow opens path for reading in windows of lines as a job does:
// resolved to its format once, then opened.
func openWindow(path string, opts msi.ReadOptions) (msi.WindowReader, error) {
	s, err := NewSource(path, opts)
	if err != nil {
		return nil, err
	}
	return s.OpenWindow()
}

// TestPrepareReportsLines checks that the pass for the largest value
// reports the lines it has read, from 0 to the height and never back, in
// every format that reads windows, and that a cube whose scale its type
// decides (uint16: no pass) reports nothing.
func TestPrepareReportsLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	c := cubetest.Uniform(rng, 9, 3, 4, 0, 300)
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		opts  msi.WriteOptions
		calls bool
	}{{"f.hdr", msi.WriteOptions{}, true}, {"f.npy", msi.WriteOptions{DType: "float32"}, true},
		{"fbwh.npy", msi.WriteOptions{DType: "float32", Axes: "BWH"}, true}, {"u16.npy", msi.WriteOptions{DType: "uint16"}, false}} {
		path := filepath.Join(dir, tc.name)
		if _, err := Write(path, c, tc.opts); err != nil {
			t.Fatal(err)
		}
		r, err := openWindow(path, msi.ReadOptions{Axes: tc.opts.Axes})
		if err != nil {
			t.Fatal(err)
		}
		var seen []int
		if err := r.Prepare(context.Background(), func(lines int) { seen = append(seen, lines) }); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if !tc.calls {
			if len(seen) != 0 {
				t.Errorf("%s: no pass, but reported %v", tc.name, seen)
			}
			continue
		}
		if len(seen) < 2 || seen[0] != 0 || seen[len(seen)-1] != c.Height || !slices.IsSorted(seen) {
			t.Errorf("%s: reported lines %v, want 0 … %d, never back", tc.name, seen, c.Height)
		}
	}
}
