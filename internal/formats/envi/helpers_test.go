package envi

import (
	"os"
	"path/filepath"
	"testing"

	"tdsc/internal/msi"
)

// openCube reads the ENVI cube at path with the default options.
func openCube(path string) (*msi.Cube, error) { return Format.Open(path, msi.ReadOptions{}) }

// writeFile writes data to dir/name and returns the path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dirNames returns the sorted names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// field returns an ENVI header field of Metadata.Fields.
func field(key, value string) msi.Field { return msi.Field{Format: name, Key: key, Value: value} }
