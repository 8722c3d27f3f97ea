// Package gdal reads rasters through GDAL, the library of geospatial
// raster formats, and writes GeoTIFF, carrying the georeferencing, the
// no-data value, band descriptions, wavelengths and GDAL's scale and
// offset. It binds GDAL's C API with cgo under the build tag gdal (make
// build sets it when libgdal-dev is installed); without the tag, the
// pure-Go build, every path of the format is an error that says how to
// get a build with GDAL (see Available).
//
// Paths: a GeoTIFF is x.tif or x.tiff; GDAL's own dataset names are
// taken as they are (HDF5:"x.h5"://group/cube, NETCDF:"x.nc":var,
// /vsizip/…); and, in the GDAL build, an existing file that no other
// format of tdsc claims is opened by GDAL (JPEG 2000, ERDAS, …). HDF5 and
// netCDF-4 files named FILE.h5:/PATH are read without GDAL (package
// internal/formats/hdf5) in both builds.
//
// Layout: GDAL shows a raster as bands × lines × samples. The axes option
// names these three dimensions in that order, BHW by default: a dataset
// whose first dimension is its lines (PRISMA's lines × bands × samples,
// which GDAL's HDF5 driver shows as that many "bands") is read with HBW.
// The band metadata (wavelengths, descriptions, no-data, scale and
// offset) is GDAL's bands' and the georeferencing GDAL's lines' and
// samples', so both apply only to the default axes.
//
// Units: GDAL's scale and offset of a band are the gain and offset of the
// one rule of units (msi.AutoScale), as an ENVI file's are: physical =
// stored × scale + offset, then the working scale. A value equal to its
// band's no-data value is missing (NaN).
package gdal

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"tdsc/internal/msi"
)

// name is the format's name in Storage.Format.
const name = "gdal"

// Format is the format of rasters read through GDAL and of GeoTIFF
// outputs.
var Format msi.Format = format{}

type format struct{}

func (format) Info() msi.Info {
	return msi.Info{Name: name, Label: "GDAL", Path: "a GeoTIFF .tif", Takes: msi.TakesAxes | msi.TakesDType,
		Carries: msi.CarriesWavelengths | msi.CarriesFWHM | msi.CarriesBandNames | msi.CarriesDescription | msi.CarriesNoData | msi.CarriesMissing | msi.CarriesGeoref}
}

// geoTIFF reports whether path names a GeoTIFF by its extension.
func geoTIFF(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".tif" || ext == ".tiff"
}

// datasetName matches GDAL's names of datasets that are not plain file
// paths: a driver's prefix (HDF5:"x.h5"://cube, NETCDF:"x.nc":var,
// GTIFF_DIR:2:x.tif) or a virtual file system (/vsizip/x.zip/y.tif).
var datasetName = regexp.MustCompile(`^([A-Z][A-Z0-9_]+:|/vsi[a-z0-9_]+/)`)

// Recognize reports whether path is a GeoTIFF or a GDAL dataset name,
// or, in the GDAL build, an existing file that one of GDAL's drivers
// takes for a raster (the format is the last asked).
func (format) Recognize(path string) bool {
	if geoTIFF(path) || datasetName.MatchString(path) {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && identify(path)
}

// Outputs returns path.
func (format) Outputs(path string) []string { return []string{path} }

// noGDAL is the error of the pure-Go build for a path of the format.
func noGDAL(path string) error {
	hint := ""
	if file, dataset, ok := hdf5Path(path); ok {
		hint = fmt.Sprintf("; this build reads HDF5 and netCDF-4 datasets itself as %s:%s", file, dataset)
	}
	return fmt.Errorf("%s: this build has no GDAL, which reads and writes GeoTIFF and GDAL's dataset names: build tdsc with `make build` where GDAL's development files are installed (Debian: apt-get install libgdal-dev)%s", path, hint)
}

// subdataset matches GDAL's names of HDF5 and netCDF datasets:
// HDF5:"FILE"://PATH and NETCDF:"FILE":VAR.
var subdataset = regexp.MustCompile(`^(?:HDF5|NETCDF):"([^"]+)":(.+)$`)

// hdf5Path returns the file and dataset of a GDAL HDF5 or netCDF dataset
// name.
func hdf5Path(path string) (file, dataset string, ok bool) {
	m := subdataset.FindStringSubmatch(path)
	if m == nil {
		return "", "", false
	}
	return m[1], "/" + strings.TrimLeft(m[2], "/"), true
}
