//go:build gdal

package gdal

// The binding: the few calls of GDAL's C API (gdal.h, cpl_conv.h) that the
// format needs, each wrapped so that the error GDAL reports is taken in
// the same C call as the work (GDAL keeps its last error per thread, and a
// goroutine may move between threads between two cgo calls).

/*
#cgo pkg-config: gdal
#include <stdlib.h>
#include <string.h>
#include <gdal.h>
#include <cpl_conv.h>
#include <cpl_error.h>
#include <cpl_string.h>

// tdsc_init registers the drivers.
static void tdsc_init(void) { GDALAllRegister(); }

// Every call below resets GDAL's last error and silences GDAL's printing
// of messages for its duration, on its thread: errors are returned to Go
// instead.
static void quiet(void) {
	CPLErrorReset();
	CPLPushErrorHandler(CPLQuietErrorHandler);
}

// loud ends quiet, returning r; when failed, *err is set to a copy of the
// last error message (to free), or NULL when GDAL gave none.
static int loud(int r, int failed, char **err) {
	if (failed) {
		const char *m = CPLGetLastErrorMsg();
		*err = (m == NULL || m[0] == 0) ? NULL : strdup(m);
	}
	CPLPopErrorHandler();
	return r;
}

static GDALDatasetH tdsc_open(const char *path, int update, char **err) {
	quiet();
	GDALDatasetH ds = GDALOpenEx(path, GDAL_OF_RASTER | GDAL_OF_VERBOSE_ERROR | (update ? GDAL_OF_UPDATE : GDAL_OF_READONLY), NULL, NULL, NULL);
	loud(0, ds == NULL, err);
	return ds;
}

// tdsc_identify reports whether a GDAL driver takes the file at path
// for a raster, from its name and first bytes.
static int tdsc_identify(const char *path) {
	quiet();
	return loud(GDALIdentifyDriverEx(path, GDAL_OF_RASTER, NULL, NULL) != NULL, 0, NULL);
}

// tdsc_io reads (write 0) or writes the region of ds of samples x0 ..
// x0+nx-1, lines y0 .. y0+ny-1 and bands b0 .. b0+nb-1 (from 0) as
// float64, band-sequential: sample x of line y of band b at
// buf[(b*ny + y)*nx + x].
static int tdsc_io(GDALDatasetH ds, int write, int x0, int y0, int b0, int nx, int ny, int nb, double *buf, char **err) {
	int *bands = malloc(sizeof(int) * nb);
	for (int i = 0; i < nb; i++) bands[i] = b0 + i + 1;
	quiet();
	CPLErr e = GDALDatasetRasterIO(ds, write ? GF_Write : GF_Read, x0, y0, nx, ny, buf, nx, ny, GDT_Float64,
		nb, bands, 8, (GSpacing)8 * nx, (GSpacing)8 * nx * ny);
	free(bands);
	return loud(e != CE_None, e != CE_None, err);
}

// tdsc_create creates a dataset with driver at path with creation options
// opts (a NULL-terminated list of KEY=VALUE).
static GDALDatasetH tdsc_create(const char *driver, const char *path, int w, int h, int bands, GDALDataType t, char **opts, char **err) {
	GDALDriverH d = GDALGetDriverByName(driver);
	if (d == NULL) {
		*err = strdup("GDAL has no such driver");
		return NULL;
	}
	quiet();
	GDALDatasetH ds = GDALCreate(d, path, w, h, bands, t, opts);
	loud(0, ds == NULL, err);
	return ds;
}

// tdsc_copy copies src to a new dataset of driver at path, with creation
// options opts, and closes the copy.
static int tdsc_copy(const char *driver, const char *path, GDALDatasetH src, char **opts, char **err) {
	GDALDriverH d = GDALGetDriverByName(driver);
	if (d == NULL) {
		*err = strdup("GDAL has no such driver");
		return 1;
	}
	quiet();
	GDALDatasetH ds = GDALCreateCopy(d, path, src, FALSE, opts, NULL, NULL);
	if (ds == NULL) return loud(1, 1, err);
	GDALClose(ds);
	int failed = CPLGetLastErrorType() >= CE_Failure;
	return loud(failed, failed, err);
}

// tdsc_close closes ds, which flushes what is written, and reports the
// error of the flush.
static int tdsc_close(GDALDatasetH ds, char **err) {
	quiet();
	GDALClose(ds);
	int failed = CPLGetLastErrorType() >= CE_Failure;
	return loud(failed, failed, err);
}
*/
import "C"

import (
	"errors"
	"strings"
	"sync"
	"unsafe"
)

var initOnce sync.Once

// Version returns GDAL's release name ("3.6.2").
func Version() string {
	initOnce.Do(func() { C.tdsc_init() })
	v := C.CString("RELEASE_NAME")
	defer C.free(unsafe.Pointer(v))
	return C.GoString(C.GDALVersionInfo(v))
}

// dataset is an open GDAL dataset.
type dataset struct{ h C.GDALDatasetH }

// takeError returns the error of a wrapped call: GDAL's message, or what
// failed when GDAL gave none.
func takeError(msg *C.char, what string) error {
	if msg == nil {
		return errors.New(what)
	}
	defer C.free(unsafe.Pointer(msg))
	return errors.New(C.GoString(msg))
}

// open opens the raster at path (a file or a GDAL dataset name), read-only
// or for update.
func open(path string, update bool) (*dataset, error) {
	initOnce.Do(func() { C.tdsc_init() })
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	var msg *C.char
	u := C.int(0)
	if update {
		u = 1
	}
	h := C.tdsc_open(p, u, &msg)
	if h == nil {
		err := takeError(msg, "GDAL cannot open it")
		// GDAL's messages often start with the path, which the caller's
		// error gives already.
		m := strings.TrimPrefix(strings.TrimPrefix(err.Error(), path), ":")
		m = strings.TrimSpace(strings.ReplaceAll(m, "`"+path+"' ", ""))
		return nil, errors.New(m)
	}
	return &dataset{h}, nil
}

// identify reports whether a GDAL driver takes the file at path for a
// raster, without opening it.
func identify(path string) bool {
	initOnce.Do(func() { C.tdsc_init() })
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	return C.tdsc_identify(p) != 0
}

// cStrings returns a NULL-terminated C array of copies of list, and a
// function that frees them.
func cStrings(list []string) (**C.char, func()) {
	arr := C.malloc(C.size_t(len(list)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	s := unsafe.Slice((**C.char)(arr), len(list)+1)
	for i, x := range list {
		s[i] = C.CString(x)
	}
	s[len(list)] = nil
	return (**C.char)(arr), func() {
		for _, p := range s[:len(list)] {
			C.free(unsafe.Pointer(p))
		}
		C.free(arr)
	}
}

// createDataset creates a width×height×bands dataset of element type t with the
// driver named driver at path, with creation options opts.
func createDataset(driver, path string, width, height, bands int, t C.GDALDataType, opts []string) (*dataset, error) {
	initOnce.Do(func() { C.tdsc_init() })
	d, p := C.CString(driver), C.CString(path)
	defer C.free(unsafe.Pointer(d))
	defer C.free(unsafe.Pointer(p))
	o, free := cStrings(opts)
	defer free()
	var msg *C.char
	h := C.tdsc_create(d, p, C.int(width), C.int(height), C.int(bands), t, o, &msg)
	if h == nil {
		return nil, takeError(msg, "GDAL cannot create it")
	}
	return &dataset{h}, nil
}

// copyTo writes a copy of ds with the driver named driver at path, with
// creation options opts.
func (ds *dataset) copyTo(driver, path string, opts []string) error {
	d, p := C.CString(driver), C.CString(path)
	defer C.free(unsafe.Pointer(d))
	defer C.free(unsafe.Pointer(p))
	o, free := cStrings(opts)
	defer free()
	var msg *C.char
	if C.tdsc_copy(d, p, ds.h, o, &msg) != 0 {
		return takeError(msg, "GDAL cannot write it")
	}
	return nil
}

// close closes ds, flushing what was written.
func (ds *dataset) close() error {
	var msg *C.char
	if C.tdsc_close(ds.h, &msg) != 0 {
		return takeError(msg, "GDAL failed to close it")
	}
	return nil
}

// size returns the dataset's height (lines), width and band count.
func (ds *dataset) size() (height, width, bands int) {
	return int(C.GDALGetRasterYSize(ds.h)), int(C.GDALGetRasterXSize(ds.h)), int(C.GDALGetRasterCount(ds.h))
}

// io reads (write false) or writes region r, band-sequential in buf (len
// r.size()).
func (ds *dataset) io(write bool, r region, buf []float64) error {
	if len(buf) != r.size() || len(buf) == 0 {
		return errors.New("bad buffer size")
	}
	wr := C.int(0)
	if write {
		wr = 1
	}
	var msg *C.char
	if C.tdsc_io(ds.h, wr, C.int(r.x0), C.int(r.y0), C.int(r.b0), C.int(r.nx), C.int(r.ny), C.int(r.nb), (*C.double)(unsafe.Pointer(&buf[0])), &msg) != 0 {
		return takeError(msg, "GDAL cannot read or write the lines")
	}
	return nil
}

// band returns band b (from 0).
func (ds *dataset) band(b int) C.GDALRasterBandH { return C.GDALGetRasterBand(ds.h, C.int(b+1)) }

// dataType returns the element type of band b.
func (ds *dataset) dataType(b int) C.GDALDataType { return C.GDALGetRasterDataType(ds.band(b)) }

// noData returns band b's no-data value and whether it has one.
func (ds *dataset) noData(b int) (float64, bool) {
	var has C.int
	v := C.GDALGetRasterNoDataValue(ds.band(b), &has)
	return float64(v), has != 0
}

// scaleOffset returns band b's scale and offset (physical = stored ×
// scale + offset) and whether it states either.
func (ds *dataset) scaleOffset(b int) (scale, offset float64, stated bool) {
	var hasS, hasO C.int
	s := C.GDALGetRasterScale(ds.band(b), &hasS)
	o := C.GDALGetRasterOffset(ds.band(b), &hasO)
	return float64(s), float64(o), hasS != 0 || hasO != 0
}

// description returns band b's description ("" when none).
func (ds *dataset) description(b int) string {
	return C.GoString(C.GDALGetDescription(C.GDALMajorObjectH(ds.band(b))))
}

// metadataItem returns the item key of domain ("" for the default) of
// band b, or of the dataset for b < 0.
func (ds *dataset) metadataItem(b int, key, domain string) string {
	k := C.CString(key)
	defer C.free(unsafe.Pointer(k))
	var d *C.char
	if domain != "" {
		d = C.CString(domain)
		defer C.free(unsafe.Pointer(d))
	}
	obj := C.GDALMajorObjectH(ds.h)
	if b >= 0 {
		obj = C.GDALMajorObjectH(ds.band(b))
	}
	return C.GoString(C.GDALGetMetadataItem(obj, k, d))
}

// georef returns the geotransform and projection, or nil when the
// dataset has neither.
func (ds *dataset) georef() (transform *[6]float64, projection string) {
	var gt [6]C.double
	projection = C.GoString(C.GDALGetProjectionRef(ds.h))
	if C.GDALGetGeoTransform(ds.h, &gt[0]) == C.CE_None {
		transform = new([6]float64)
		for i, v := range gt {
			transform[i] = float64(v)
		}
	}
	return transform, projection
}

// setGeoref sets the geotransform and projection.
func (ds *dataset) setGeoref(transform [6]float64, projection string) {
	var gt [6]C.double
	for i, v := range transform {
		gt[i] = C.double(v)
	}
	C.GDALSetGeoTransform(ds.h, &gt[0])
	if projection != "" {
		p := C.CString(projection)
		defer C.free(unsafe.Pointer(p))
		C.GDALSetProjection(ds.h, p)
	}
}

// setBand sets band b's description, no-data value (when has), scale and
// offset (when stated) and metadata items (key, value pairs).
func (ds *dataset) setBand(b int, description string, noData float64, has bool, scale, offset float64, stated bool, items []string) {
	h := ds.band(b)
	if description != "" {
		d := C.CString(description)
		defer C.free(unsafe.Pointer(d))
		C.GDALSetDescription(C.GDALMajorObjectH(h), d)
	}
	if has {
		C.GDALSetRasterNoDataValue(h, C.double(noData))
	}
	if stated {
		C.GDALSetRasterScale(h, C.double(scale))
		C.GDALSetRasterOffset(h, C.double(offset))
	}
	for i := 0; i+1 < len(items); i += 2 {
		ds.setItem(C.GDALMajorObjectH(h), items[i], items[i+1])
	}
}

// setDatasetItem sets a metadata item of the dataset's default domain.
func (ds *dataset) setDatasetItem(key, value string) {
	ds.setItem(C.GDALMajorObjectH(ds.h), key, value)
}

func (ds *dataset) setItem(obj C.GDALMajorObjectH, key, value string) {
	k, v := C.CString(key), C.CString(value)
	defer C.free(unsafe.Pointer(k))
	defer C.free(unsafe.Pointer(v))
	C.GDALSetMetadataItem(obj, k, v, nil)
}

// The element types of GDAL that tdsc maps to its own.
var gdalTypes = map[C.GDALDataType]string{
	C.GDT_Byte: "uint8", C.GDT_UInt16: "uint16", C.GDT_Int16: "int16",
	C.GDT_UInt32: "uint32", C.GDT_Int32: "int32", C.GDT_Float32: "float32", C.GDT_Float64: "float64",
	C.GDT_UInt64: "uint64", C.GDT_Int64: "int64",
}

// typeName returns tdsc's name of GDAL type t, or GDAL's own name and
// false for a type tdsc does not read (complex numbers).
func typeName(t C.GDALDataType) (string, bool) {
	if n, ok := gdalTypes[t]; ok {
		return n, true
	}
	return C.GoString(C.GDALGetDataTypeName(t)), false
}

// gdalType returns the GDAL type of tdsc's type name.
func gdalType(name string) (C.GDALDataType, bool) {
	for t, n := range gdalTypes {
		if n == name {
			return t, true
		}
	}
	return 0, false
}
