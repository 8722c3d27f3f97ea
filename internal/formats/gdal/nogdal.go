//go:build !gdal

package gdal

import "tdsc/internal/msi"

// Available reports whether this build has GDAL: the pure-Go build has
// not.
const Available = false

// Version returns GDAL's release name, "" in the pure-Go build.
func Version() string { return "" }

// Open reports that this build has no GDAL.
func (format) Open(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	return nil, noGDAL(path)
}

// Write reports that this build has no GDAL.
func (format) Write(path string, c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	return msi.WriteInfo{}, noGDAL(path)
}

// WriteError reports that this build has no GDAL (msi.ReadOnly).
func (format) WriteError(path string) error { return noGDAL(path) }

// identify reports that no GDAL driver takes a file: there is none.
func identify(string) bool { return false }
