package cmd

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestBareValues parses --sigma-per-band as the help writes it: with its
// value after a space or an equals sign, and alone (on), before another
// flag or at the end.
func TestBareValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sigma-per-band", "off"}, "off"},
		{[]string{"--sigma-per-band=off"}, "off"},
		{[]string{"--sigma-per-band", "auto", "--sigma", "3"}, "auto"},
		{[]string{"--sigma-per-band"}, "on"},
		{[]string{"--sigma-per-band", "--sigma", "3"}, "on"},
		{[]string{"--sigma", "3"}, "auto"},
		{[]string{"--sigma-per-band", "bogus"}, "bogus"}, // refused by its parser, by name
	} {
		var df denoiseFlags
		f := newDenoiseCmdWith(&df).Flags()
		if err := f.Parse(withBareValues(f, tc.args, false)); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if df.noise.perBand != tc.want || f.NArg() != 0 {
			t.Errorf("%q: --sigma-per-band %q and arguments %q, want %q and none", tc.args, df.noise.perBand, f.Args(), tc.want)
		}
	}
	// The word being completed is left as typed.
	f := newDenoiseCmd().Flags()
	if got := withBareValues(f, []string{"--sigma-per-band"}, true); !slices.Equal(got, []string{"--sigma-per-band"}) {
		t.Errorf("completing: %q", got)
	}
}

// TestFixedValuesComplete asks the shell completion of every command for
// the values of every flag declared with fixed values, and checks that a
// flag whose help lists auto/off modes is one of them, so that a new
// flag of that kind cannot be left without completion.
func TestFixedValuesComplete(t *testing.T) {
	root := newRoot(new(bytes.Buffer), new(bytes.Buffer))
	checked := 0
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			values := fl.Annotations[valuesAnnotation]
			if len(values) == 0 {
				if strings.HasPrefix(fl.Usage, "auto or off") || strings.HasPrefix(fl.Usage, "auto:") {
					t.Errorf("%s --%s lists modes but does not complete them", c.Name(), fl.Name)
				}
				return
			}
			var out bytes.Buffer
			r := newRoot(&out, new(bytes.Buffer))
			r.SetArgs([]string{cobra.ShellCompRequestCmd, c.Name(), "--" + fl.Name, ""})
			if err := r.Execute(); err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSpace(out.String()), "\n")
			if !slices.Equal(got[:len(got)-1], values) {
				t.Errorf("%s --%s completes %q, want %q", c.Name(), fl.Name, got, values)
			}
			checked++
		})
	}
	if checked < 10 {
		t.Errorf("only %d flags with fixed values", checked)
	}
}
