package denoise

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/dictfile"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
	"tdsc/internal/tile"
)

// recorder is a method that records the Config it was built from and
// returns its input.
type recorder struct{ c Config }

func (r *recorder) Denoise(_ context.Context, noisy *msi.Cube, _ float64) (*msi.Cube, Result, error) {
	return noisy.Clone(), Result{}, nil
}

func (r *recorder) Check(float64, int, int, int) error { return nil }

// testSpec reads beta and patch, and takes a dictionary.
func testSpec(got **recorder) Spec {
	return Spec{
		Name:     "test",
		Settings: []Setting{Beta, Patch},
		New: func(c Config) (Method, error) {
			if c.Values.Int(Patch) == 13 {
				return nil, option.Errorf("patch", 13, "patch 13: the dictionary is for 5×5-pixel patches")
			}
			*got = &recorder{c: c}
			return *got, nil
		},
		TakesDictionary: true,
	}
}

// TestSpecParse checks that flags a method does not read are refused first,
// all of them named with the ones it reads, and that values are parsed by
// the method's declarations.
func TestSpecParse(t *testing.T) {
	var r *recorder
	s := testSpec(&r)
	var names []string
	for _, d := range s.Flags() {
		names = append(names, d.Name)
	}
	if want := []string{"beta", "patch", "dict"}; !slices.Equal(names, want) {
		t.Errorf("flags %v, want %v", names, want)
	}
	_, err := s.Parse(map[string]string{"rank": "3", "patch": "x"})
	if err == nil || err.Error() != "--rank does not apply to --method test (it reads --beta, --patch, --dict)" {
		t.Errorf("one stray flag: %v", err)
	}
	_, err = s.Parse(map[string]string{"rank": "3", "wiener": "1"})
	if err == nil || !strings.HasPrefix(err.Error(), "--rank, --wiener do not apply to --method test") {
		t.Errorf("two stray flags: %v", err)
	}
	var oe *option.Error
	if _, err = s.Parse(map[string]string{"patch": "0"}); !errors.As(err, &oe) || oe.Field != "patch" {
		t.Errorf("patch 0: %v", err)
	}
	v, err := s.Parse(map[string]string{"patch": "7", "beta": "2"})
	if err != nil || v.Int(Patch) != 7 || v.Float(Beta) != 2 {
		t.Errorf("patch 7 beta 2: %v, %v", v, err)
	}
	saver := Spec{Name: "saver", SavesDictionary: true}
	if got := saver.Flags(); len(got) != 1 || got[0].Name != "save-dict" {
		t.Errorf("the flags of a method that saves its dictionary: %v", got)
	}
}

// writeDictionary writes a dictionary file of 5×5×5 patches with the β and
// σ given and returns its path.
func writeDictionary(t *testing.T, beta, sigma float64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.json")
	m := &dictfile.Model{Patch: dictfile.PatchShape{Height: 5, Width: 5, Depth: 5}, Beta: beta, Sigma: sigma, Seed: 1,
		Atoms: tproduct.NewTensor(25, 3, 5)}
	if err := m.WriteFile(path, false); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBuildDictionary checks the rule of a given dictionary: without σ and
// β given, its β is the method's and its σ the known noise level; with
// either given, or when it records no β, neither is taken.
func TestBuildDictionary(t *testing.T) {
	var r *recorder
	s := testSpec(&r)
	path := writeDictionary(t, 90, 30)
	for _, c := range []struct {
		given      map[string]string
		sigmaGiven bool
		beta       float64
		known      float64
	}{
		{map[string]string{"dict": path}, false, 90, 30},
		{map[string]string{"dict": path}, true, 0, 0},
		{map[string]string{"dict": path, "beta": "50"}, false, 50, 0},
		{map[string]string{}, false, 0, 0},
	} {
		v, err := s.Parse(c.given)
		if err != nil {
			t.Fatal(err)
		}
		_, known, err := s.Build(v, c.sigmaGiven, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.c.Values.Float(Beta); got != c.beta || known != c.known {
			t.Errorf("%v, σ given %v: β %v, known σ %v; want %v, %v", c.given, c.sigmaGiven, got, known, c.beta, c.known)
		}
		if (r.c.Dictionary != nil) != (c.given["dict"] != "") {
			t.Errorf("%v: dictionary %v", c.given, r.c.Dictionary)
		}
	}
	noBeta := writeDictionary(t, 0, 30)
	v, _ := s.Parse(map[string]string{"dict": noBeta})
	if _, known, err := s.Build(v, false, Env{}); err != nil || known != 0 || r.c.Values.Has(Beta) {
		t.Errorf("a dictionary without β: known %v, β given %v, %v", known, r.c.Values.Has(Beta), err)
	}
}

// TestBuildErrors checks that a missing dictionary file and an error of New
// about it name the file, and that negative threads are refused.
func TestBuildErrors(t *testing.T) {
	var r *recorder
	s := testSpec(&r)
	missing := filepath.Join(t.TempDir(), "missing.json")
	v, _ := s.Parse(map[string]string{"dict": missing})
	if _, _, err := s.Build(v, false, Env{}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing dictionary: %v", err)
	}
	path := writeDictionary(t, 90, 30)
	v, _ = s.Parse(map[string]string{"dict": path, "patch": "13"})
	var oe *option.Error
	if _, _, err := s.Build(v, false, Env{}); !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), path+": patch 13") {
		t.Errorf("patch against the dictionary: %v", err)
	}
	v, _ = s.Parse(nil)
	if _, _, err := s.Build(v, false, Env{Threads: -1}); !errors.As(err, &oe) || oe.Field != "threads" {
		t.Errorf("threads -1: %v", err)
	}
}

// TestCheckSigma checks the one rule of the noise level.
func TestCheckSigma(t *testing.T) {
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		var oe *option.Error
		if err := CheckSigma(s); !errors.As(err, &oe) || oe.Field != "sigma" || !strings.HasPrefix(err.Error(), "sigma must be a finite number > 0") {
			t.Errorf("σ = %v: %v", s, err)
		}
	}
	for _, s := range []float64{1e-300, 30, 1e9} {
		if err := CheckSigma(s); err != nil {
			t.Errorf("σ = %v: %v", s, err)
		}
	}
}

// TestResolveSigma checks the order given, known, estimated, and that an
// estimate of a noise-free cube asks for σ.
func TestResolveSigma(t *testing.T) {
	flat := msi.NewCube(64, 64, 4)
	for i := range flat.Data {
		flat.Data[i] = 100
	}
	noisy := noise.Add(nil, flat, 20, 1)
	for _, c := range []struct {
		given, known float64
		want         float64
	}{
		{30, 10, 30},
		{0, 10, 10},
	} {
		if got, err := ResolveSigma(noisy, c.given, c.known, nil); err != nil || got != c.want {
			t.Errorf("given %v, known %v: %v, %v; want %v", c.given, c.known, got, err, c.want)
		}
	}
	if got, err := ResolveSigma(noisy, 0, 0, nil); err != nil || math.Abs(got-20) > 1 {
		t.Errorf("estimated σ of σ = 20 noise: %v, %v", got, err)
	}
	if _, err := ResolveSigma(noisy, -2, 0, nil); err == nil {
		t.Error("σ = -2 given was accepted")
	}
	var oe *option.Error
	if _, err := ResolveSigma(flat, 0, 0, nil); !errors.As(err, &oe) || !strings.Contains(err.Error(), "could not estimate") {
		t.Errorf("a noise-free cube: %v", err)
	}
	if got, err := ResolveTrainSigma(flat, 0, true, nil); err != nil || got != 0 {
		t.Errorf("training with β on a noise-free cube: %v, %v; want 0, nil", got, err)
	}
	if _, err := ResolveTrainSigma(flat, 0, false, nil); err == nil {
		t.Error("training without β or σ on a noise-free cube was accepted")
	}
}

// TestTileGeometryOfOthers: a method that is not a Tiler gets strips of
// DefaultHalo lines of context, not exact.
func TestTileGeometryOfOthers(t *testing.T) {
	g, exact := TileGeometry(&recorder{}, 30)
	if exact || g.Halo != DefaultHalo || g.Align != 1 {
		t.Errorf("%+v, exact %v", g, exact)
	}
}

// tilingRecorder is a recorder that is a Tiler.
type tilingRecorder struct{ recorder }

func (*tilingRecorder) TileGeometry(float64) tile.Geometry { return tile.Geometry{Halo: 3, Align: 1} }

func (r *tilingRecorder) PrepareTiles(context.Context, tile.Reader, []tile.Strip, float64) (Method, Result, error) {
	return r, Result{}, nil
}

// TestExactStrips: a Spec's exact strips are whether the method it builds
// with its defaults is a Tiler, and so are the strips TileGeometry gives.
func TestExactStrips(t *testing.T) {
	for _, tiles := range []bool{false, true} {
		s := Spec{Name: "m", New: func(Config) (Method, error) {
			if tiles {
				return &tilingRecorder{}, nil
			}
			return &recorder{}, nil
		}}
		m, _ := s.New(Config{})
		if _, exact := TileGeometry(m, 30); s.ExactStrips() != tiles || exact != tiles {
			t.Errorf("a Tiler %v: ExactStrips %v, TileGeometry exact %v", tiles, s.ExactStrips(), exact)
		}
	}
}

func TestParams(t *testing.T) {
	got := Params("beta", 90.0, "atoms", "6,6,6", "seed", uint64(1))
	want := []Param{{"beta", "90"}, {"atoms", "6,6,6"}, {"seed", "1"}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%v, want %v", got, want)
		}
	}
}

// TestSigmaInUnits checks how σ is said: on the working scale alone for
// an input on it, in the input's units first otherwise; and the warning
// for a given σ more than SigmaMismatch times from the estimate.
func TestSigmaInUnits(t *testing.T) {
	if got := InUnits(30, 1); got != "30.00" {
		t.Errorf("scale 1: %q", got)
	}
	if got := InUnits(30, 0); got != "30.00" {
		t.Errorf("scale 0: %q", got)
	}
	if got := InUnits(30, 255); got != "0.1176 in the input's units, 30 on the working [0, 255] scale" {
		t.Errorf("reflectance: %q", got)
	}
	for _, c := range []struct {
		given, estimate float64
		warn            bool
	}{
		{30, 30, false}, {120, 30, false}, {7.5, 30, false},
		{121, 30, true}, {7.4, 30, true}, {1e9, 30, true}, {30, 0, true},
	} {
		w := GivenSigmaWarning(c.given, c.estimate, 255)
		if (w != "") != c.warn || c.warn && !strings.HasPrefix(w, "warning: ") {
			t.Errorf("given %v, estimate %v: %q", c.given, c.estimate, w)
		}
	}
	if w := GivenSigmaWarning(1e9, 30, 1); !strings.Contains(w, "is 3.33e+07 times the σ estimated from the input (given: 1000000000.00; estimated: 30.00)") {
		t.Errorf("1e9: %q", w)
	}
}
