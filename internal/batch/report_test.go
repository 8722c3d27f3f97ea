package batch

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tdsc/internal/metrics/scorejson"
)

// putResult writes a result as Runner does for the cell (scene, σ, seed,
// label) with the given PSNR and SSIM.
func putResult(t *testing.T, root, scene string, sigma float64, seed uint64, label string, index int, psnr, ssim float64) {
	t.Helper()
	s, err := slug(label)
	if err != nil {
		t.Fatal(err)
	}
	c := Cell{Scene: Scene{scene, "/d/" + scene}, Sigma: sigma, Seed: seed, Method: ResolvedMethod{Label: label, Slug: s, Name: "a", Index: index}}
	path := ResultPath(root, c)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Result{Format: ResultFormat, Cell: c.ID(), Scene: scene, Sigma: sigma, Seed: seed, Label: label, Method: "a", MethodIndex: index,
		PSNR: scorejson.Float(psnr), SSIM: scorejson.Float(ssim), SAM: 2, ERGAS: 7, WallSeconds: 1.5, PeakRSSBytes: 1 << 20, Fingerprint: c.Fingerprint()}
	if err := writeResult(path, r); err != nil {
		t.Fatal(err)
	}
}

func TestReport(t *testing.T) {
	root := t.TempDir()
	// Two methods, the second first in the plan (index 0); at σ = 30 the
	// method "z" lacks scene b, so it has no mean there.
	for _, r := range []struct {
		scene string
		sigma float64
		label string
		index int
		psnr  float64
	}{
		{"b", 10, "z", 0, 40}, {"b", 10, "a x", 1, 41}, {"a", 10, "z", 0, 38}, {"a", 10, "a x", 1, 39},
		{"a", 30, "z", 0, 30}, {"a", 30, "a x", 1, math.Inf(1)}, {"b", 30, "a x", 1, 31},
	} {
		putResult(t, root, r.scene, r.sigma, 1, r.label, r.index, r.psnr, 0.9)
	}
	// A file being written and a noisy cube are not results.
	os.WriteFile(filepath.Join(root, "a", "sigma10-seed1", ".z.json.tmp-1"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(root, "a", "sigma10-seed1", "noisy.hdr"), []byte("ENVI"), 0o644)

	tab, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Missing != 1 {
		t.Errorf("missing %d, want 1", tab.Missing)
	}
	var md bytes.Buffer
	if err := tab.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	want := `| scene | σ | seed | z PSNR | z SSIM | a x PSNR | a x SSIM |
| :-- | --: | --: | --: | --: | --: | --: |
| a | 10 | 1 | 38.00 | 0.9000 | 39.00 | 0.9000 |
| b | 10 | 1 | 40.00 | 0.9000 | 41.00 | 0.9000 |
| **mean** | 10 |  | 39.00 | 0.9000 | 40.00 | 0.9000 |
| a | 30 | 1 | 30.00 | 0.9000 | inf | 0.9000 |
| b | 30 | 1 | — | — | 31.00 | 0.9000 |
| **mean** | 30 |  | — | — | inf | 0.9000 |
`
	if md.String() != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", md.String(), want)
	}

	var csv bytes.Buffer
	if err := tab.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if lines[0] != "scene,sigma,seed,z psnr,z ssim,z sam,z ergas,a x psnr,a x ssim,a x sam,a x ergas" ||
		lines[3] != "mean,10,,39,0.9,2,7,40,0.9,2,7" || lines[5] != "b,30,1,,,,,31,0.9,2,7" || len(lines) != 7 {
		t.Errorf("CSV:\n%s", csv.String())
	}

	var js bytes.Buffer
	if err := tab.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Methods []string
		Rows    []struct {
			Scene   string
			Results map[string]struct {
				PSNR        *float64 `json:"psnr"`
				WallSeconds float64  `json:"wall_seconds"`
			}
		}
		Means []struct {
			Sigma   float64
			Results map[string]struct{ PSNR float64 }
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("%v\n%s", err, js.String())
	}
	if len(back.Rows) != 4 || back.Rows[2].Results["a x"].PSNR != nil || back.Rows[0].Results["z"].WallSeconds != 1.5 ||
		len(back.Means) != 2 || back.Means[0].Results["z"].PSNR != 39 || len(back.Means[1].Results) != 1 {
		t.Errorf("JSON:\n%s", js.String())
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Collect(filepath.Join(dir, "nothere")); err == nil || !strings.Contains(err.Error(), "no such folder") {
		t.Errorf("missing root: %v", err)
	}
	if _, err := Collect(dir); err == nil || !strings.Contains(err.Error(), "no results of tdsc batch") {
		t.Errorf("empty root: %v", err)
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	if _, err := Collect(file); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("root is a file: %v", err)
	}

	bad := filepath.Join(dir, "s", "sigma10-seed1", "x.json")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	for text, want := range map[string]string{
		`{"psnr": 3`:                         "not a tdsc batch result",
		`{"format": "other"}`:                `format "other"`,
		`{"format": "` + ResultFormat + `"}`: "without its scene",
	} {
		os.WriteFile(bad, []byte(text), 0o644)
		if _, err := Collect(dir); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), bad) {
			t.Errorf("result %s: got error %v, want %q naming the file", text, err, want)
		}
	}
	// Beside a good result, a corrupt one is left out and listed, and the
	// table holds the good one.
	putResult(t, dir, "s", 10, 1, "m", 0, 30, 0.8)
	os.WriteFile(bad, []byte(`{"psnr": 3`), 0o644)
	if tab, err := Collect(dir); err != nil || len(tab.Rows) != 1 || tab.Rows[0].Results["m"] == nil ||
		len(tab.Unreadable) != 1 || !strings.Contains(tab.Unreadable[0].Error(), bad) {
		t.Errorf("a corrupt result beside a good one: %+v, %v", tab, err)
	}
	os.Remove(bad)
	os.Remove(filepath.Join(dir, "s", "sigma10-seed1", "m.json"))
	// The same label twice for one cube (two folders of one scene name
	// cannot arise from one plan, but a copied file can).
	putResult(t, dir, "s", 10, 1, "m", 0, 30, 0.8)
	data, _ := os.ReadFile(filepath.Join(dir, "s", "sigma10-seed1", "m.json"))
	os.WriteFile(filepath.Join(dir, "s", "sigma10-seed1", "copy.json"), data, 0o644)
	if _, err := Collect(dir); err == nil || !strings.Contains(err.Error(), "two results of m") {
		t.Errorf("duplicate: %v", err)
	}
}
