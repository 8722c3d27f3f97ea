package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/denoise"
)

// declared is a setting as one method declares it; method is "" on a
// command of one method (train), whose help names none.
type declared struct {
	method  string
	setting denoise.Setting
}

// declarations lists every setting that specs read, method by method.
func declarations(specs []denoise.Spec) []declared {
	var out []declared
	for _, s := range specs {
		for _, d := range s.Flags() {
			out = append(out, declared{s.Name, d})
		}
	}
	return out
}

// settingFlags are the flags of method settings, by name. Each keeps its
// value as typed until the method that reads it is known, whose
// declaration then parses it (denoise.Spec.Parse): a flag may have
// another type for another method (--atoms is one count, or one per mode
// for tensr), and its errors are worded once, by the declaration.
type settingFlags map[string]*settingValue

// settingValue is the pflag.Value of a setting flag.
type settingValue struct{ text, syntax string }

func (v *settingValue) String() string     { return v.text }
func (v *settingValue) Set(s string) error { v.text = s; return nil }
func (v *settingValue) Type() string       { return v.syntax }

// registerSettings adds to c a flag for every setting of decls, with its
// help and the completion of its values built from the declarations.
func registerSettings(c *cobra.Command, decls []declared) settingFlags {
	var names []string
	byName := map[string][]declared{}
	for _, d := range decls {
		if _, ok := byName[d.setting.Name]; !ok {
			names = append(names, d.setting.Name)
		}
		byName[d.setting.Name] = append(byName[d.setting.Name], d)
	}
	flags := settingFlags{}
	for _, name := range names {
		ds := byName[name]
		v := &settingValue{syntax: settingSyntax(ds)}
		c.Flags().Var(v, name, settingUsage(ds))
		flags[name] = v
		var choices []string
		for _, d := range ds {
			for _, w := range d.setting.Choices {
				if !slices.Contains(choices, w) {
					choices = append(choices, w)
				}
			}
		}
		if ds[0].setting.Kind == denoise.File {
			continue // the shell completes file names
		}
		_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(choices, cobra.ShellCompDirectiveNoFileComp))
	}
	return flags
}

// given returns the settings given on the command line of f: flag name →
// value as typed.
func (s settingFlags) given(f *pflag.FlagSet) map[string]string {
	out := map[string]string{}
	for name, v := range s {
		if f.Changed(name) {
			out[name] = v.text
		}
	}
	return out
}

// settingSyntax is how help shows the value of a flag that the methods of
// ds read: int, or int|R1,R2,R3 when they read it differently.
func settingSyntax(ds []declared) string {
	var alts []string
	for _, d := range ds {
		for _, a := range strings.Split(d.setting.Syntax(), "|") {
			if !slices.Contains(alts, a) {
				alts = append(alts, a)
			}
		}
	}
	return strings.Join(alts, "|")
}

// settingUsage is the help of a flag that the methods of ds read: what it
// is, its special values, and each method's default. Methods that
// describe it alike share one text, which names them unless every method
// of ds shares it and they are several:
//
//	patch side p in pixels (default nonlocal, 2dsc: 5; bwksvd: 8)
//	nonlocal: dimension of … (default …); parafac: the CP rank (default …)
//	nonlocal: low-rank rounds (default 2)
//
// On a command of one method (train) it is the help and the default.
func settingUsage(ds []declared) string {
	var helps []string
	byHelp := map[string][]declared{}
	for _, d := range ds {
		h := d.setting.Help
		if sp := d.setting.Specials(); sp != "" {
			h += "; " + sp
		}
		if _, ok := byHelp[h]; !ok {
			helps = append(helps, h)
		}
		byHelp[h] = append(byHelp[h], d)
	}
	named := ds[0].method != "" && (len(helps) > 1 || len(ds) == 1)
	parts := make([]string, len(helps))
	for i, h := range helps {
		group := byHelp[h]
		if named {
			h = methodsText(group) + ": " + h
		}
		parts[i] = h + defaultsText(group, named || ds[0].method == "")
	}
	return strings.Join(parts, "; ")
}

// methodsText names the methods of ds: "nonlocal, 2dsc".
func methodsText(ds []declared) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.method
	}
	return strings.Join(names, ", ")
}

// defaultsText is the defaults of ds for a help text: " (default 5)" when
// they share one and the text names the methods already (named), else
// " (default 2dsc, sc: 5; bwksvd: 8)"; "" when there is none.
func defaultsText(ds []declared, named bool) string {
	var values []string
	byValue := map[string][]declared{}
	for _, d := range ds {
		if d.setting.Default == "" {
			continue
		}
		if _, ok := byValue[d.setting.Default]; !ok {
			values = append(values, d.setting.Default)
		}
		byValue[d.setting.Default] = append(byValue[d.setting.Default], d)
	}
	switch {
	case len(values) == 0:
		return ""
	case len(values) == 1 && named:
		return fmt.Sprintf(" (default %s)", values[0])
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = methodsText(byValue[v]) + ": " + v
	}
	return " (default " + strings.Join(parts, "; ") + ")"
}
