package cmd

import (
	"bytes"
	"strings"
	"testing"

	"tdsc/internal/formats"
)

// TestRootHelpNamesEveryFormat: the root help lists the formats from the
// registry, so a format registered there is named without an edit here.
func TestRootHelpNamesEveryFormat(t *testing.T) {
	help := strings.Join(strings.Fields(newRoot(new(bytes.Buffer), new(bytes.Buffer)).Long), " ")
	for _, f := range formats.All {
		if p := f.Info().Path; !strings.Contains(help, p) {
			t.Errorf("the root help does not name %q: %s", p, help)
		}
	}
}
