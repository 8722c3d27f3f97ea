package gdal

import (
	"strings"
	"testing"
)

// TestRecognize checks the names the format takes in every build.
func TestRecognize(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"x.tif", true},
		{"x.TIFF", true},
		{`HDF5:"x.h5"://a/b`, true},
		{`NETCDF:"x.nc":v`, true},
		{"/vsizip/x.zip/y.tif", true},
		{"x.npy", false},
		{"C:x", false}, // a one-letter prefix is a drive, not a driver
		{"missing.jp2", false},
	} {
		if got := Format.Recognize(tc.path); got != tc.want {
			t.Errorf("Recognize(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// TestHDF5Path maps GDAL's names of HDF5 and netCDF datasets to the
// FILE:/PATH of the pure-Go reader, which the error of a build without
// GDAL suggests.
func TestHDF5Path(t *testing.T) {
	for _, tc := range []struct{ path, file, dataset string }{
		{`HDF5:"a b.h5"://HDFEOS/SWATHS/Data Fields/Cube`, "a b.h5", "/HDFEOS/SWATHS/Data Fields/Cube"},
		{`NETCDF:"x.nc":reflectance`, "x.nc", "/reflectance"},
	} {
		file, dataset, ok := hdf5Path(tc.path)
		if !ok || file != tc.file || dataset != tc.dataset {
			t.Errorf("hdf5Path(%q) = %q, %q, %v", tc.path, file, dataset, ok)
		}
	}
	if _, _, ok := hdf5Path("x.tif"); ok {
		t.Error("hdf5Path(x.tif) took it")
	}
	if !strings.Contains(noGDAL(`HDF5:"x.h5"://a`).Error(), "as x.h5:/a") {
		t.Errorf("noGDAL: %v", noGDAL(`HDF5:"x.h5"://a`))
	}
}
