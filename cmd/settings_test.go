package cmd

import (
	"strconv"
	"strings"
	"testing"

	"tdsc/internal/denoise"
	"tdsc/internal/methods"
)

// validText returns a value of s that its rule accepts, as typed.
func validText(s denoise.Setting) string {
	n := strconv.Itoa(max(s.Min, 1))
	switch s.Kind {
	case denoise.Float:
		return "1.5"
	case denoise.Enum:
		return s.Choices[0]
	case denoise.File:
		return "f.json"
	case denoise.IntList:
		return strings.TrimSuffix(strings.Repeat(n+",", s.Lengths[0]), ",")
	}
	return n
}

// TestEveryMethodFlag parses every setting flag of tdsc denoise for every
// method of the registry, as the command line does: a method accepts the
// flags it declares and refuses the others, naming the flag.
func TestEveryMethodFlag(t *testing.T) {
	decls := map[string]denoise.Setting{}
	for _, d := range declarations(methods.All()) {
		decls[d.setting.Name] = d.setting
	}
	for _, spec := range methods.All() {
		for name, some := range decls {
			text, reads := validText(some), false
			for _, d := range spec.Flags() {
				if d.Name == name {
					text, reads = validText(d), true
				}
			}
			var df denoiseFlags
			f := newDenoiseCmdWith(&df).Flags()
			if err := f.Parse([]string{"--" + name, text}); err != nil {
				t.Fatalf("--%s %s: %v", name, text, err)
			}
			_, err := spec.Parse(df.settings.given(f))
			switch {
			case reads && err != nil:
				t.Errorf("%s refuses --%s %s: %v", spec.Name, name, text, err)
			case !reads && (err == nil || !strings.HasPrefix(err.Error(), "--"+name+" does not apply to --method "+spec.Name)):
				t.Errorf("%s --%s %s: got %v", spec.Name, name, text, err)
			}
		}
	}
}

// TestSettingUsage checks the help of a setting flag built from its
// declarations.
func TestSettingUsage(t *testing.T) {
	patch := denoise.Patch
	rank := denoise.Setting{Name: "rank", Kind: denoise.Int, Min: 1, Special: []denoise.Special{{Value: 0, Meaning: "auto"}}}
	for _, c := range []struct {
		ds   []declared
		want string
	}{
		{[]declared{{"", withDefault(patch, "5")}}, "patch side p in pixels (default 5)"},
		{[]declared{{"a", withDefault(patch, "5")}}, "a: patch side p in pixels (default 5)"},
		{[]declared{{"a", withDefault(patch, "5")}, {"b", withDefault(patch, "5")}, {"c", withDefault(patch, "8")}},
			"patch side p in pixels (default a, b: 5; c: 8)"},
		{[]declared{{"a", withDefault(patch, "5")}, {"b", withDefault(patch, "5")}}, "patch side p in pixels (default a, b: 5)"},
		{[]declared{{"a", withDefault(withHelp(rank, "subspace"), "6")}, {"b", withHelp(rank, "CP rank")}},
			"a: subspace; 0: auto (default 6); b: CP rank; 0: auto"},
		{[]declared{{"a", denoise.Dict}}, "a: " + denoise.Dict.Help},
	} {
		if got := settingUsage(c.ds); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	atoms := []declared{{"a", denoise.Atoms}, {"b", denoise.Setting{Name: "atoms", Kind: denoise.IntList, Lengths: []int{1, 3}}}}
	if got := settingSyntax(atoms); got != "int|R1,R2,R3" {
		t.Errorf("syntax of atoms %q", got)
	}
}

func withHelp(s denoise.Setting, help string) denoise.Setting {
	s.Help = help
	return s
}

func withDefault(s denoise.Setting, def string) denoise.Setting {
	s.Default = def
	return s
}

func TestWrap(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for _, line := range strings.Split(wrap(long), "\n") {
		if len(line) > helpWidth || strings.HasPrefix(line, " ") || strings.HasSuffix(line, " ") {
			t.Errorf("line %q", line)
		}
	}
	if got := wrap("a  b\nc"); got != "a b c" {
		t.Errorf("wrap of a short text: %q", got)
	}
	if got := andList([]string{"a", "b", "c"}); got != "a, b and c" {
		t.Errorf("andList %q", got)
	}
}
