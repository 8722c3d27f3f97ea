package batch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// acceptAll is a CheckMethod that knows the methods "a" and "b", rejects
// any other and returns the flags sorted. It checks that it is given the
// plan's noise levels, resolved: sorted, distinct, at least one.
func acceptAll(name string, flags []string, _ string, sigmas []float64) ([]string, error) {
	if name != "a" && name != "b" {
		return nil, errors.New("unknown method " + name)
	}
	if len(sigmas) == 0 || !slices.IsSorted(sigmas) || len(slices.Compact(slices.Clone(sigmas))) != len(sigmas) {
		return nil, fmt.Errorf("noise levels %v not resolved", sigmas)
	}
	return slices.Sorted(slices.Values(flags)), nil
}

// sceneTree makes folders (band stacks as far as Resolve looks) and ENVI
// file pairs under a new temporary folder and returns it.
func sceneTree(t *testing.T, dirs []string, files []string) string {
	t.Helper()
	base := t.TempDir()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		p := filepath.Join(base, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

func TestReadPlan(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"scenes": ["s/*"], "sigmas": [10, 30], "seeds": [1, 2],
  "methods": [{"label": "x", "method": "a", "flags": ["--k", "3"]}], "out": "r"}`)
	p, err := ReadPlan(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scenes) != 1 || len(p.Sigmas) != 2 || len(p.Seeds) != 2 || p.Methods[0].Flags[1] != "3" || p.Out != "r" {
		t.Errorf("read %+v", p)
	}

	for _, c := range []struct{ name, text, want string }{
		{"syntax.json", "{\n\"scenes\": [\"a\",]\n}", "line 2: invalid character ']'"},
		{"unknown.json", `{"scenes": ["a"], "sigma": [10]}`, `unknown field "sigma"`},
		{"type.json", "{\n\n\"sigmas\": \"10\"}", `line 3: "sigmas" must be a list, not a JSON string`},
		{"trailing.json", `{"out": "r"} {}`, "more data after"},
		{"empty.json", ``, "empty file"},
		{"short.json", `{"out": `, "ends early"},
		{"missing.json", "", "no such file"},
	} {
		path := filepath.Join(dir, c.name)
		if c.name != "missing.json" {
			write(c.name, c.text)
		}
		_, err := ReadPlan(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got error %v, want one naming the file and saying %q", c.name, err, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	base := sceneTree(t, []string{"cave/b_ms", "cave/a_ms", "cave/notes"}, []string{"other/c.hdr", "other/c.img", "other/readme.txt"})
	p := &Plan{
		Scenes:  []string{"cave/*_ms", "other/c.*", "cave/a_ms"},
		Sigmas:  []float64{30, 10},
		Methods: []Method{{Name: "b", Flags: []string{"--z", "--y"}}, {Label: "mine", Name: "a"}},
		Out:     "out",
	}
	r, err := Resolve(p, base, acceptAll)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Scenes {
		names = append(names, s.Name)
	}
	if want := []string{"a_ms", "b_ms", "c"}; !slices.Equal(names, want) {
		t.Errorf("scenes %v, want %v", names, want)
	}
	if got := r.Scenes[2].Path; got != filepath.Join(base, "other", "c.hdr") {
		t.Errorf("ENVI scene path %s, want its .hdr", got)
	}
	if !slices.Equal(r.Sigmas, []float64{10, 30}) || !slices.Equal(r.Seeds, []uint64{1}) {
		t.Errorf("sigmas %v seeds %v, want [10 30] and the default [1]", r.Sigmas, r.Seeds)
	}
	if r.Root != filepath.Join(base, "out") {
		t.Errorf("root %s", r.Root)
	}
	m := r.Methods
	if m[0].Label != "b --z --y" || m[0].Slug != "b_--z_--y" || !slices.Equal(m[0].Flags, []string{"--y", "--z"}) || m[1].Slug != "mine" || m[1].Index != 1 {
		t.Errorf("methods %+v", m)
	}
}

// TestResolveFormats resolves scenes of every format: each named by its
// file without the extension (a MAT-file variable by its file), an ENVI
// cube by its header whichever of its files matched, once.
func TestResolveFormats(t *testing.T) {
	base := sceneTree(t, nil, []string{"arr/x.npy", "arr/y.mat", "arr/c.hdr", "arr/c.img", "more/d.img", "more/d.img.hdr", "more/v.mat"})
	p := &Plan{Scenes: []string{"arr/*", "more/d.img", "more/v.mat:cube"}, Sigmas: []float64{10}, Methods: []Method{{Name: "a"}}, Out: "out"}
	r, err := Resolve(p, base, acceptAll)
	if err != nil {
		t.Fatal(err)
	}
	want := []Scene{
		{"c", filepath.Join(base, "arr", "c.hdr")},
		{"d", filepath.Join(base, "more", "d.img")}, // its header is d.img.hdr
		{"v", filepath.Join(base, "more", "v.mat:cube")},
		{"x", filepath.Join(base, "arr", "x.npy")},
		{"y", filepath.Join(base, "arr", "y.mat")},
	}
	if !slices.Equal(r.Scenes, want) {
		t.Errorf("scenes\n%v\nwant\n%v", r.Scenes, want)
	}
	p.Scenes = []string{"more/w.mat:cube"}
	if _, err := Resolve(p, base, acceptAll); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a variable of a missing file: %v", err)
	}
}

func TestResolveErrors(t *testing.T) {
	base := sceneTree(t, []string{"cave/a_ms", "more/a_ms"}, []string{"x.txt", "afile"})
	ok := func() *Plan {
		return &Plan{Scenes: []string{"cave/a_ms"}, Sigmas: []float64{10}, Methods: []Method{{Name: "a"}}, Out: "o"}
	}
	for _, c := range []struct {
		name string
		edit func(p *Plan)
		want string
	}{
		{"no out", func(p *Plan) { p.Out = "" }, "no output root"},
		{"out is a file", func(p *Plan) { p.Out = "afile" }, "is a file"},
		{"no scenes", func(p *Plan) { p.Scenes = nil }, "no scenes"},
		{"missing scene", func(p *Plan) { p.Scenes = []string{"cave/zz_ms"} }, "scene cave/zz_ms: no such file or folder"},
		{"empty glob", func(p *Plan) { p.Scenes = []string{"cave/*_xx"} }, "cave/*_xx matches nothing"},
		{"bad glob", func(p *Plan) { p.Scenes = []string{"cave/[a"} }, "bad pattern"},
		{"not a cube", func(p *Plan) { p.Scenes = []string{"x.txt"} }, "not a cube"},
		{"same name", func(p *Plan) { p.Scenes = []string{"*/a_ms"} }, "have the same name a_ms"},
		{"no sigmas", func(p *Plan) { p.Sigmas = nil }, "no noise levels"},
		{"zero sigma", func(p *Plan) { p.Sigmas = []float64{0} }, "σ = 0: must be a positive number"},
		{"twice sigma", func(p *Plan) { p.Sigmas = []float64{10, 10} }, "σ = 10 is listed twice"},
		{"twice seed", func(p *Plan) { p.Seeds = []uint64{3, 3} }, "seed 3 is listed twice"},
		{"no methods", func(p *Plan) { p.Methods = nil }, "no methods"},
		{"no method name", func(p *Plan) { p.Methods = []Method{{Label: "x"}} }, `method "x": no method name`},
		{"unknown method", func(p *Plan) { p.Methods = []Method{{Name: "zz"}} }, `method "zz": unknown method zz`},
		{"method twice", func(p *Plan) { p.Methods = append(p.Methods, Method{Name: "a"}) }, `method "a" is listed twice`},
		{"same slug", func(p *Plan) { p.Methods = []Method{{Label: "x y", Name: "a"}, {Label: "x/y", Name: "b"}} }, `"x y" and "x/y" name the same file x_y.json`},
		{"label start", func(p *Plan) { p.Methods = []Method{{Label: "-x", Name: "a"}} }, "must start with a letter or digit"},
		{"label noisy", func(p *Plan) { p.Methods = []Method{{Label: "Noisy", Name: "a"}} }, "taken by the noisy cube"},
	} {
		p := ok()
		c.edit(p)
		_, err := Resolve(p, base, acceptAll)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"2dsc":                  "2dsc",
		"sc --atoms 30":         "sc_--atoms_30",
		"nl/w=3, r=2":           "nl_w_3_r_2",
		"a+b.c_d-e":             "a+b.c_d-e",
		"é über":                "_ber",
		"trailing  ":            "trailing",
		"x\t\ny":                "x_y",
		"sc --dict /tmp/d.json": "sc_--dict_tmp_d.json",
	} {
		got, err := slug(in)
		if want == "_ber" {
			if err == nil {
				t.Errorf("slug(%q) = %q, want an error (starts with '_')", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("slug(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// FuzzReadPlan feeds arbitrary bytes to the plan reader: it must return a
// plan or an error that names the file, and never panic. (Resolve is left
// out: it reads the scenes a plan names, anywhere on the file system.)
func FuzzReadPlan(f *testing.F) {
	f.Add([]byte(`{"scenes": ["a"], "sigmas": [10, 30], "seeds": [1], "methods": [{"label": "x", "method": "2dsc", "flags": ["--atoms", "30"]}], "out": "r"}`))
	f.Add([]byte(`{"scenes": [], "sigmas": [-1]}`))
	f.Add([]byte(`{"scenes": ["*"], "methods": [{}]} {}`))
	f.Add([]byte("{\n\"sigmas\": [1e999]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "plan.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadPlan(path); err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}
