package denoise

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"tdsc/internal/option"
)

// The settings of the parsing tests: one of each kind and rule.
var (
	testRank   = Setting{Name: "rank", Kind: Int, Min: 1, Special: []Special{{0, "from the data"}}}
	testWiener = Setting{Name: "wiener", Kind: Int, Min: 1, Special: []Special{{-1, "none"}}}
	testRanks  = Setting{Name: "ranks", Kind: IntList, Lengths: []int{3}, Min: 1, Special: []Special{{0, "chosen by AIC"}}}
	testAtoms  = Setting{Name: "atoms", Kind: IntList, Lengths: []int{1, 3}, Min: 1}
	testWeight = Setting{Name: "weights", Kind: Enum, Choices: []string{"sparsity", "uniform"}}
)

// TestParse checks that each kind reads what it should, as the value Parse
// documents, and that Format spells it back.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		s    Setting
		text string
		want any
	}{
		{Patch, "5", 5},
		{Patch, "1", 1},
		{Patch.WithMin(2), "2", 2},
		{Seed, "1", uint64(1)},
		{Patch, "0x10", 16},
		{testRank, "0", 0},
		{testRank, "12", 12},
		{testWiener, "-1", -1},
		{Seed, "7", uint64(7)},
		{Beta, "2.5", 2.5},
		{Beta, "1e-3", 1e-3},
		{testWeight, "uniform", "uniform"},
		{Dict, "d.json", "d.json"},
		{testRanks, "3, 4,5", []int{3, 4, 5}},
		{testRanks, "0,0,7", []int{0, 0, 7}},
		{testAtoms, "8", []int{8}},
		{testAtoms, "6,6,4", []int{6, 6, 4}},
	} {
		got, err := c.s.Parse(c.text)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q: %#v, %v; want %#v", c.s.Name, c.text, got, err, c.want)
			continue
		}
		back, err := c.s.Parse(c.s.Format(got))
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("%s %q: Format gives %q, which reads as %#v, %v", c.s.Name, c.text, c.s.Format(got), back, err)
		}
	}
}

// TestParseErrors checks that a value typed on the command line that the
// rule refuses is an *option.Error for the setting, worded with its name
// first, as the command line expects to turn it into the flag; and that a
// zero typed is an error unless the rule gives it a meaning.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		s    Setting
		text string
		want string
	}{
		{Patch, "x", `patch must be a whole number, got "x"`},
		{Patch, "0", "patch must be at least 1, got 0"},
		{Patch, "-3", "patch must be at least 1, got -3"},
		{Patch, "2.5", `patch must be a whole number, got "2.5"`},
		{testRank, "-3", "rank must be at least 1 (or 0: from the data), got -3"},
		{testWiener, "0", "wiener must be at least 1 (or -1: none), got 0"},
		{testWiener, "-5", "wiener must be at least 1 (or -1: none), got -5"},
		{Seed, "0", "seed must be at least 1, got 0"},
		{Seed, "-1", `seed must be a whole number ≥ 0, got "-1"`},
		{Beta, "0", "beta must be a finite number > 0, got 0"},
		{Beta, "-1", "beta must be a finite number > 0, got -1"},
		{Beta, "NaN", "beta must be a finite number > 0, got NaN"},
		{Beta, "Inf", "beta must be a finite number > 0, got +Inf"},
		{Beta, "lots", `beta must be a number, got "lots"`},
		{testWeight, "median", `weights must be sparsity or uniform, got "median"`},
		{testWeight, "", `weights must be sparsity or uniform, got ""`},
		{Dict, "", `dict must name a file, got ""`},
		{testRanks, "3,3", `ranks must be three whole numbers R1,R2,R3, got "3,3"`},
		{testRanks, "3,x,3", `ranks must be three whole numbers R1,R2,R3, got "3,x,3"`},
		{testRanks, "3,-1,2", `ranks must be three whole numbers R1,R2,R3, each at least 1 (or 0: chosen by AIC), got "3,-1,2"`},
		{testAtoms, "", `atoms must be one whole number or three R1,R2,R3, got ""`},
		{testAtoms, "1,2", `atoms must be one whole number or three R1,R2,R3, got "1,2"`},
		{testAtoms, "1,2,3,4", `atoms must be one whole number or three R1,R2,R3, got "1,2,3,4"`},
		{testAtoms, "0", `atoms must be one whole number or three R1,R2,R3, each at least 1, got "0"`},
		{testAtoms, "6,0,6", `atoms must be one whole number or three R1,R2,R3, each at least 1, got "6,0,6"`},
	} {
		_, err := c.s.Parse(c.text)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != c.s.Name || err.Error() != c.want {
			t.Errorf("%s %q: got %v, want %q for field %s", c.s.Name, c.text, err, c.want, c.s.Name)
		}
	}
}

// TestCheck checks the rules as a method applies them to its settings
// after defaults: the same as on the command line.
func TestCheck(t *testing.T) {
	if err := Patch.CheckInt(5); err != nil {
		t.Error(err)
	}
	if err := Patch.WithMin(2).CheckInt(1); err == nil || err.Error() != "patch must be at least 2, got 1" {
		t.Errorf("patch 1 of at least 2: %v", err)
	}
	if err := testRank.CheckInt(0); err != nil {
		t.Errorf("rank 0 (from the data): %v", err)
	}
	if err := testWiener.CheckInt(-2); err == nil {
		t.Error("wiener -2 passed")
	}
	if err := testRanks.CheckInts([]int{0, 3, 0}); err != nil {
		t.Error(err)
	}
	if err := testRanks.CheckInts([]int{0, -3, 0}); err == nil {
		t.Error("ranks 0,-3,0 passed")
	}
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := Beta.CheckFloat(v); err == nil {
			t.Errorf("beta %v passed", v)
		}
	}
	if err := Beta.CheckFloat(1e-300); err != nil {
		t.Error(err)
	}
	if err := (Setting{Name: "gain", Kind: Float}).CheckFloat(-1); err != nil {
		t.Errorf("a Float without a rule: %v", err)
	}
}

// TestSyntaxAndSpecials checks how help texts show a setting.
func TestSyntaxAndSpecials(t *testing.T) {
	for s, want := range map[*Setting]string{&Patch: "int", &Seed: "uint", &Beta: "float", &testWeight: "string",
		&Dict: "file", &testRanks: "R1,R2,R3", &testAtoms: "int|R1,R2,R3"} {
		if got := s.Syntax(); got != want {
			t.Errorf("%s: syntax %q, want %q", s.Name, got, want)
		}
	}
	if got := testWiener.Specials(); got != "-1: none" {
		t.Errorf("wiener's specials %q", got)
	}
}

// TestValues checks the accessors: absent settings are zero, a list is a
// copy, and an accessor of the wrong kind panics.
func TestValues(t *testing.T) {
	v := Values{m: map[string]any{"patch": 7, "ranks": []int{1, 2, 3}, "weights": "uniform", "seed": uint64(4), "beta": 2.0}}
	if v.Int(Patch) != 7 || v.Int(Depth) != 0 || v.Uint(Seed) != 4 || v.Float(Beta) != 2 || v.String(testWeight) != "uniform" || v.String(Dict) != "" {
		t.Errorf("accessors: %d %d %d %v %q %q", v.Int(Patch), v.Int(Depth), v.Uint(Seed), v.Float(Beta), v.String(testWeight), v.String(Dict))
	}
	if !v.Has(Patch) || v.Has(Depth) {
		t.Error("Has")
	}
	r := v.Ints(testRanks)
	r[0] = 99
	if v.Ints(testRanks)[0] != 1 {
		t.Error("Ints returned the stored slice")
	}
	w := v.with(Beta, 5.0)
	if v.Float(Beta) != 2 || w.Float(Beta) != 5 {
		t.Error("with changed its receiver")
	}
	got := v.Canonical([]Setting{Patch, testRanks, Beta, Depth})
	if want := map[string]string{"patch": "7", "ranks": "1,2,3", "beta": "2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Canonical: %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("Float of an Int setting did not panic")
		}
	}()
	v.Float(Patch)
}

// TestCheckStrideAndPatch checks the shared checks and their wording.
func TestCheckStrideAndPatch(t *testing.T) {
	if err := CheckStride(5, 5); err != nil {
		t.Error(err)
	}
	var oe *option.Error
	if err := CheckStride(6, 5); !errors.As(err, &oe) || oe.Field != "stride" || !strings.HasPrefix(err.Error(), "stride 6 is larger than the patch size 5") {
		t.Errorf("stride 6, patch 5: %v", err)
	}
	if err := CheckPatchFits(5, 5, 5, 5, 5); err != nil {
		t.Error(err)
	}
	if err := CheckPatchFits(128, 128, 31, 5, 40); err == nil || err.Error() != "image is 128×128×31 but the patch is 5×5×40: it needs at least 5×5 pixels and 40 bands" {
		t.Errorf("depth 40 on 31 bands: %v", err)
	}
	if err := CheckPatchFits(4, 128, 31, 5, 5); err == nil {
		t.Error("a 4-line cube fits a 5×5 patch")
	}
}

// TestClampThreads bounds the workers to MaxThreadsPerCore a core, with a
// note, and leaves every count up to it (and 0, all cores) as it is.
func TestClampThreads(t *testing.T) {
	limit := MaxThreadsPerCore * runtime.NumCPU()
	for _, n := range []int{0, 1, limit} {
		if got, note := ClampThreads(n); got != n || note != "" {
			t.Errorf("ClampThreads(%d) = %d, %q", n, got, note)
		}
	}
	if got, note := ClampThreads(100000); got != limit || !strings.Contains(note, fmt.Sprintf("using %d", limit)) {
		t.Errorf("ClampThreads(100000) = %d, %q", got, note)
	}
}
