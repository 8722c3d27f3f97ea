package dictfile

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/algebra/tproduct/tproducttest"
)

// atomNorm2 returns ‖d(:,j,:)‖².
func atomNorm2(d *tproduct.Tensor, j int) float64 {
	var s float64
	for _, v := range d.Lateral(j) {
		s += v * v
	}
	return s
}

// modelTestModel returns a random valid model with awkward float64 values
// (subnormals, values needing 17 digits) among its atoms.
func modelTestModel(rng *rand.Rand, h, w, depth, r int) *Model {
	a := tproducttest.UnitAtoms(rng, h*w, r, depth)
	awkward := []float64{5e-324, -0.1 * (1 + 0x1p-52), 0}
	copy(a.Data, awkward[:min(len(awkward), len(a.Data)-1)])
	for j := range r {
		if n2 := atomNorm2(a, j); n2 > 1 {
			s := 1 / math.Sqrt(n2)
			for i := range a.Lateral(j) {
				a.Lateral(j)[i] *= s
			}
		}
	}
	obj := make([]float64, 7)
	for i := range obj {
		obj[i] = 1e6 * rng.Float64()
	}
	return &Model{
		Description: "test dictionary",
		CreatedBy:   "tdsc test",
		Patch:       PatchShape{Height: h, Width: w, Depth: depth},
		Beta:        120.25,
		Sigma:       30,
		Seed:        math.MaxUint64 - 3,
		Iterations:  len(obj),
		Objective:   obj,
		Atoms:       a,
	}
}

func TestModelRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	dir := t.TempDir()
	for i, shape := range [][4]int{{5, 5, 5, 30}, {3, 2, 4, 7}, {1, 1, 1, 1}} {
		m := modelTestModel(rng, shape[0], shape[1], shape[2], shape[3])
		path := filepath.Join(dir, "dict"+string(rune('a'+i))+".json")
		if err := m.WriteFile(path, false); err != nil {
			t.Fatal(err)
		}
		got, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != m.Description || got.CreatedBy != m.CreatedBy || got.Patch != m.Patch ||
			math.Float64bits(got.Beta) != math.Float64bits(m.Beta) || got.Sigma != m.Sigma ||
			got.Seed != m.Seed || got.Iterations != m.Iterations {
			t.Errorf("header differs:\n got %+v\nwant %+v", got, m)
		}
		if !modelBitsEqual(got.Objective, m.Objective) {
			t.Errorf("objective differs")
		}
		if got.Atoms.M != m.Atoms.M || got.Atoms.N != m.Atoms.N || got.Atoms.K != m.Atoms.K || !modelBitsEqual(got.Atoms.Data, m.Atoms.Data) {
			t.Errorf("atoms differ")
		}
		// The file's own description of itself.
		raw, _ := os.ReadFile(path)
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if doc["format"] != ModelFormat || doc["version"] != float64(ModelVersion) ||
			doc["m"] != float64(shape[0]*shape[1]) || doc["r"] != float64(shape[3]) || doc["k"] != float64(shape[2]) {
			t.Errorf("self-description wrong: %v %v %v %v %v", doc["format"], doc["version"], doc["m"], doc["r"], doc["k"])
		}
		if atom := doc["atoms"].([]any)[0].([]any)[0].([]any); atom[0] != m.Atoms.At(0, 0, 0) || len(atom) != m.Atoms.M {
			t.Errorf("atoms[0][0] = %v, want a band of %d numbers starting with %v", atom[:1], m.Atoms.M, m.Atoms.At(0, 0, 0))
		}
	}
}

func modelBitsEqual(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

func TestModelUnknownSigmaOmitted(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	m := modelTestModel(rng, 2, 2, 3, 2)
	m.Sigma = 0
	m.Iterations, m.Objective = 0, nil
	path := filepath.Join(t.TempDir(), "d.json")
	if err := m.WriteFile(path, false); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte(`"sigma"`)) {
		t.Error("unknown sigma written")
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sigma != 0 || got.Iterations != 0 || len(got.Objective) != 0 {
		t.Errorf("got sigma %v, %d iterations, %d objective values", got.Sigma, got.Iterations, len(got.Objective))
	}
}

func TestModelWriteRefusesOverwrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	dir := t.TempDir()
	path := filepath.Join(dir, "d.json")
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := modelTestModel(rng, 2, 3, 2, 3)
	err := m.WriteFile(path, false)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("overwrite without force: %v", err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "precious" {
		t.Fatal("existing file changed")
	}
	if err := m.WriteFile(path, true); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err != nil {
		t.Fatal(err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries after writing", len(entries))
	}
	// Invalid models are not written.
	bad := modelTestModel(rng, 2, 3, 2, 3)
	bad.Atoms.Data[4] = math.NaN()
	badPath := filepath.Join(dir, "bad.json")
	if err := bad.WriteFile(badPath, false); err == nil || !strings.Contains(err.Error(), badPath) {
		t.Errorf("NaN atom written: %v", err)
	}
	if _, err := os.Stat(badPath); err == nil {
		t.Error("invalid model left a file")
	}
}

// modelEdit returns the file of a valid model after edit changed its JSON
// object.
func modelEdit(t *testing.T, edit func(doc map[string]any)) []byte {
	t.Helper()
	m := modelTestModel(rand.New(rand.NewPCG(27, 28)), 2, 2, 3, 2)
	data, err := m.marshal()
	if err != nil {
		t.Fatal(err)
	}
	// Numbers stay as written (the seed needs all 64 bits).
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadModelRejects(t *testing.T) {
	valid, err := modelTestModel(rand.New(rand.NewPCG(27, 28)), 2, 2, 3, 2).marshal()
	if err != nil {
		t.Fatal(err)
	}
	atoms := func(doc map[string]any) []any { return doc["atoms"].([]any) }
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "invalid JSON", nil},
		{"truncated", "invalid JSON", valid[:len(valid)/2]},
		{"garbage", "invalid JSON", []byte("\x89PNG\r\n\x1a\n")},
		{"trailing", "invalid JSON", append(slices.Clone(valid), "{}"...)},
		{"other format", "not a dictionary file", modelEdit(t, func(d map[string]any) { d["format"] = "something-else" })},
		{"no format", "not a dictionary file", modelEdit(t, func(d map[string]any) { delete(d, "format") })},
		{"newer version", "version 2 is not supported", modelEdit(t, func(d map[string]any) { d["version"] = 2 })},
		{"no version", "version", modelEdit(t, func(d map[string]any) { delete(d, "version") })},
		{"missing atoms", "missing field(s) atoms", modelEdit(t, func(d map[string]any) { delete(d, "atoms") })},
		{"missing beta and seed", "missing field(s) beta, seed", modelEdit(t, func(d map[string]any) { delete(d, "beta"); delete(d, "seed") })},
		{"missing patch depth", "patch.depth", modelEdit(t, func(d map[string]any) { delete(d["patch"].(map[string]any), "depth") })},
		{"null atoms", "missing field(s) atoms", modelEdit(t, func(d map[string]any) { d["atoms"] = nil })},
		{"unknown field", "unknown field", modelEdit(t, func(d map[string]any) { d["colour"] = "blue" })},
		{"other layout", "layout", modelEdit(t, func(d map[string]any) { d["layout"] = "column-major" })},
		{"atom count", "1 atoms, but r = 2", modelEdit(t, func(d map[string]any) { d["atoms"] = atoms(d)[:1] })},
		{"band count", "atom 2 has 2 bands", modelEdit(t, func(d map[string]any) { atoms(d)[1] = atoms(d)[1].([]any)[:2] })},
		{"band length", "atom 1 band 3 has 3 numbers", modelEdit(t, func(d map[string]any) {
			a := atoms(d)[0].([]any)
			a[2] = a[2].([]any)[:3]
		})},
		{"m not patch", "a 2×3×3 patch needs 6×1×3", modelEdit(t, func(d map[string]any) { d["patch"].(map[string]any)["width"] = 3 })},
		{"k not depth", "needs", modelEdit(t, func(d map[string]any) { d["patch"].(map[string]any)["depth"] = 4 })},
		{"zero size", "bad dictionary size", modelEdit(t, func(d map[string]any) { d["r"] = 0; d["atoms"] = []any{} })},
		{"huge size", "bad dictionary size", modelEdit(t, func(d map[string]any) { d["m"] = 1 << 40 })},
		{"string number", "malformed", modelEdit(t, func(d map[string]any) { d["beta"] = "10" })},
		{"negative beta", "beta", modelEdit(t, func(d map[string]any) { d["beta"] = -1 })},
		{"objective count", "objective values for", modelEdit(t, func(d map[string]any) { d["iterations"] = 3 })},
		{"atom too long", "squared norm", modelEdit(t, func(d map[string]any) {
			atoms(d)[1].([]any)[0].([]any)[0] = json.Number("1.5")
		})},
		{"NaN atom", "invalid JSON", bytes.Replace(valid, []byte("\n      ["), []byte("\n      [NaN,"), 1)},
		{"overflowing atom", "malformed", bytes.Replace(valid, []byte("\n      ["), []byte("\n      [1e999,"), 1)},
	}
	dir := t.TempDir()
	for i, c := range cases {
		path := filepath.Join(dir, "case"+string(rune('a'+i))+".json")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(path)
		switch {
		case err == nil:
			t.Errorf("%s: accepted", c.name)
		case !strings.Contains(err.Error(), path):
			t.Errorf("%s: error does not name the file: %v", c.name, err)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %q does not say %q", c.name, err, c.want)
		}
	}
	if _, err := Read(filepath.Join(dir, "absent.json")); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("absent file: %v", err)
	}
}

func FuzzReadModel(f *testing.F) {
	rng := rand.New(rand.NewPCG(29, 30))
	for _, shape := range [][4]int{{2, 2, 3, 2}, {1, 1, 1, 1}} {
		data, err := modelTestModel(rng, shape[0], shape[1], shape[2], shape[3]).marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"format":"tdsc-dictionary","version":1}`))
	f.Add([]byte(`{"format":"tdsc-dictionary","version":1,"m":1,"r":1,"k":1,"patch":{"height":1,"width":1,"depth":1},"beta":0,"seed":0,"iterations":0,"objective":[],"atoms":[[[0.5]]]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Read(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := m.validate(); err != nil {
			t.Fatalf("accepted an inconsistent model: %v", err)
		}
		a := m.Atoms
		if a.M != m.Patch.Height*m.Patch.Width || a.K != m.Patch.Depth || len(a.Data) != a.M*a.N*a.K {
			t.Fatalf("sizes disagree: atoms %d×%d×%d, patch %+v", a.M, a.N, a.K, m.Patch)
		}
		// What was read writes back and reads again to the same model.
		again, err := m.marshal()
		if err != nil {
			t.Fatal(err)
		}
		m2, err := parseModel(again)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if !modelBitsEqual(m2.Atoms.Data, a.Data) || !modelBitsEqual(m2.Objective, m.Objective) || m2.Seed != m.Seed {
			t.Fatal("second round trip differs")
		}
	})
}
