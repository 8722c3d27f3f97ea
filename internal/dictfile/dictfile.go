// Package dictfile reads and writes tdsc's dictionary files: a learned
// dictionary of image patches (the atoms, the patch geometry, and the β, σ
// on the [0, 255] scale and seed it was learned with) as JSON, so that a
// dictionary can be reused and its learning reproduced. The format is
// described below; Read checks everything it reads.
package dictfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/atomicfile"
	"tdsc/internal/tsc"
)

// Dictionary file format. A dictionary file is a UTF-8 JSON object:
//
//	{
//	  "format": "tdsc-dictionary",
//	  "version": 1,
//	  "description": "...",          (optional, free text)
//	  "created_by": "tdsc v1.2.3",   (optional)
//	  "m": 25, "r": 30, "k": 5,      (atoms are m×1×k, r of them)
//	  "patch": {"height": 5, "width": 5, "depth": 5},
//	  "layout": ModelLayout,
//	  "beta": 120,                   (ℓ1 weight used in learning)
//	  "sigma": 30,                   (noise level trained for; omitted when unknown)
//	  "seed": 1,
//	  "iterations": 30,              (outer iterations run)
//	  "objective": [...],            (2DSC objective after each of them)
//	  "atoms": [[[...m numbers...], ...k bands...], ...r atoms...]
//	}
//
// with m = height·width and k = depth. Numbers are written in the shortest
// form that reads back to the same float64, so a round trip is bit-exact.
const (
	// ModelFormat is the value of the "format" field.
	ModelFormat = "tdsc-dictionary"
	// ModelVersion is the format version written and read by this package.
	ModelVersion = 1
	// ModelLayout documents how the numbers of "atoms" map to a patch. It is
	// stored in every file and checked on reading.
	ModelLayout = "atoms[j][t][i] = D(i,j,t): atom j, band t of the patch window, " +
		"pixel i = y*width + x of the window (row-major); a patch of height×width " +
		"pixels and depth consecutive bands is the (height·width)×1×depth tensor " +
		"approximated by the t-product D*b"
	defaultDescription = "2DSC dictionary: r atoms of size m×1×k combined by the t-product " +
		"(circular convolution along the band axis)"
	// maxModelDim bounds every size in a dictionary file, so that hostile
	// sizes cannot overflow or exhaust memory before the atoms are checked.
	maxModelDim = 1 << 16
)

// PatchShape is the geometry of the image patches a dictionary codes: a
// Height×Width window over Depth consecutive bands.
type PatchShape struct {
	Height, Width, Depth int
}

// Model is a learned dictionary with what is needed to use and reproduce
// it.
type Model struct {
	// Description is free text; WriteFile writes a generic one when empty.
	Description string
	// CreatedBy names the program and version that wrote the file.
	CreatedBy string
	// Patch is the patch geometry; Atoms.M = Height·Width, Atoms.K = Depth.
	Patch PatchShape
	// Beta is the ℓ1 weight β of the learning objective.
	Beta float64
	// Sigma is the noise standard deviation (on the [0, 255] scale) the
	// dictionary was trained for, or 0 when unknown.
	Sigma float64
	// Seed is the seed of the initialisation.
	Seed uint64
	// Iterations is the number of outer learning iterations run, and
	// Objective the 2DSC objective after each of them (len Iterations).
	Iterations int
	Objective  []float64
	// Atoms is the M×R×K dictionary; every atom has ‖D(:,j,:)‖_F² ≤ 1.
	Atoms *tproduct.Tensor
}

// modelPatch is the JSON form of PatchShape.
type modelPatch struct {
	Height *int `json:"height"`
	Width  *int `json:"width"`
	Depth  *int `json:"depth"`
}

// modelHeader is the JSON form of a Model without its atoms. Pointers mark
// the required fields, so that a missing one is told apart from a zero.
type modelHeader struct {
	Format      *string     `json:"format"`
	Version     *int        `json:"version"`
	Description string      `json:"description,omitempty"`
	CreatedBy   string      `json:"created_by,omitempty"`
	M           *int        `json:"m"`
	R           *int        `json:"r"`
	K           *int        `json:"k"`
	Patch       *modelPatch `json:"patch"`
	Layout      *string     `json:"layout"`
	Beta        *float64    `json:"beta"`
	Sigma       float64     `json:"sigma,omitempty"`
	Seed        *uint64     `json:"seed"`
	Iterations  *int        `json:"iterations"`
	Objective   *[]float64  `json:"objective"`
}

// modelFile is the whole JSON object of a dictionary file.
type modelFile struct {
	modelHeader
	Atoms *[][][]float64 `json:"atoms"`
}

// validate checks the internal consistency of m: sizes, patch geometry,
// finiteness and the unit-ball constraint of the atoms.
func (m *Model) validate() error {
	a := m.Atoms
	if a == nil {
		return errors.New("no atoms")
	}
	p := m.Patch
	if p.Height < 1 || p.Width < 1 || p.Depth < 1 || p.Height > maxModelDim || p.Width > maxModelDim || p.Depth > maxModelDim {
		return fmt.Errorf("bad patch size %d×%d×%d", p.Height, p.Width, p.Depth)
	}
	if a.M != p.Height*p.Width || a.K != p.Depth {
		return fmt.Errorf("atoms are %d×1×%d, but a %d×%d×%d patch needs %d×1×%d",
			a.M, a.K, p.Height, p.Width, p.Depth, p.Height*p.Width, p.Depth)
	}
	if a.N < 1 || len(a.Data) != a.M*a.N*a.K {
		return fmt.Errorf("atom tensor %d×%d×%d holds %d numbers", a.M, a.N, a.K, len(a.Data))
	}
	if !finiteNonNegative(m.Beta) {
		return fmt.Errorf("beta %v is not a finite non-negative number", m.Beta)
	}
	if !finiteNonNegative(m.Sigma) {
		return fmt.Errorf("sigma %v is not a finite non-negative number", m.Sigma)
	}
	if m.Iterations < 0 || len(m.Objective) != m.Iterations {
		return fmt.Errorf("%d objective values for %d iterations", len(m.Objective), m.Iterations)
	}
	for i, v := range m.Objective {
		if !finiteNonNegative(v) {
			return fmt.Errorf("objective value %d is %v", i+1, v)
		}
	}
	for j := range a.N {
		var n2 float64
		for _, v := range a.Lateral(j) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("atom %d holds %v", j+1, v)
			}
			n2 += v * v
		}
		if n2 > 1+tsc.AtomNormSlack {
			return fmt.Errorf("atom %d has squared norm %.17g > 1", j+1, n2)
		}
	}
	return nil
}

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// marshal returns the file contents of m: the header indented, every band
// of every atom on one line.
func (m *Model) marshal() ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	a := m.Atoms
	format, version, layout := ModelFormat, ModelVersion, ModelLayout
	desc := m.Description
	if desc == "" {
		desc = defaultDescription
	}
	objective := m.Objective
	if objective == nil {
		objective = []float64{}
	}
	iters := m.Iterations
	h := modelHeader{
		Format: &format, Version: &version, Description: desc, CreatedBy: m.CreatedBy,
		M: &a.M, R: &a.N, K: &a.K,
		Patch:  &modelPatch{Height: &m.Patch.Height, Width: &m.Patch.Width, Depth: &m.Patch.Depth},
		Layout: &layout, Beta: &m.Beta, Sigma: m.Sigma, Seed: &m.Seed,
		Iterations: &iters, Objective: &objective,
	}
	head, err := json.MarshalIndent(&h, "", "  ")
	if err != nil {
		return nil, err
	}
	// Replace the closing brace of the header by the atoms.
	head = bytes.TrimSuffix(bytes.TrimSpace(head), []byte("}"))
	var buf bytes.Buffer
	buf.Write(bytes.TrimRight(head, " \n"))
	buf.WriteString(",\n  \"atoms\": [")
	for j := range a.N {
		if j > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    [")
		for t := range a.K {
			if t > 0 {
				buf.WriteByte(',')
			}
			row, err := json.Marshal(a.Lateral(j)[t*a.M : (t+1)*a.M])
			if err != nil {
				return nil, err
			}
			buf.WriteString("\n      ")
			buf.Write(row)
		}
		buf.WriteString("\n    ]")
	}
	buf.WriteString("\n  ]\n}\n")
	return buf.Bytes(), nil
}

// WriteFile writes m to path as a dictionary file. The file is written to a
// temporary file in the same folder and renamed into place, so readers never
// see a partial file. Unless force is set, an existing path is not
// overwritten (an *atomicfile.ExistsError). Errors name the file; an inconsistent model (see Read)
// is refused.
func (m *Model) WriteFile(path string, force bool) error {
	data, err := m.marshal()
	if err != nil {
		return fmt.Errorf("dictionary %s: cannot write an invalid model: %w", path, err)
	}
	f, err := atomicfile.Create(path, force)
	if err != nil {
		return fmt.Errorf("dictionary %w", err) // atomicfile's errors name the file
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("dictionary %s: %w", path, err)
	}
	if err := atomicfile.Commit(f); err != nil {
		return fmt.Errorf("dictionary %w", err)
	}
	return nil
}

// Read reads a dictionary file written by WriteFile. It checks the
// format name and version, that every required field is present, that the
// sizes agree (r atoms of k bands of m = height·width numbers, k = depth),
// that every number is finite, that every atom has squared norm ≤ 1 + 1e−9,
// and that there is one objective value per iteration. Errors name the
// file and say what is wrong.
func Read(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dictionary %s: %w", path, err)
	}
	m, err := parseModel(data)
	if err != nil {
		return nil, fmt.Errorf("dictionary %s: %w", path, err)
	}
	return m, nil
}

// parseModel decodes and checks the contents of a dictionary file.
func parseModel(data []byte) (*Model, error) {
	// The format and version first, so that a file of another kind or
	// version is named as such rather than by its first unknown field.
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("not a dictionary file (invalid JSON: %v)", err)
	}
	var format string
	if raw, ok := probe["format"]; !ok || json.Unmarshal(raw, &format) != nil || format != ModelFormat {
		return nil, fmt.Errorf("not a dictionary file (\"format\" is not %q)", ModelFormat)
	}
	var version int
	if raw, ok := probe["version"]; !ok || json.Unmarshal(raw, &version) != nil {
		return nil, errors.New("missing or malformed \"version\"")
	}
	if version != ModelVersion {
		return nil, fmt.Errorf("format version %d is not supported (this build reads version %d)", version, ModelVersion)
	}

	var f modelFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("malformed dictionary: %v", err)
	}
	var missing []string
	for _, field := range []struct {
		name    string
		present bool
	}{
		{"m", f.M != nil}, {"r", f.R != nil}, {"k", f.K != nil},
		{"patch", f.Patch != nil}, {"layout", f.Layout != nil}, {"beta", f.Beta != nil},
		{"seed", f.Seed != nil}, {"iterations", f.Iterations != nil},
		{"objective", f.Objective != nil}, {"atoms", f.Atoms != nil},
	} {
		if !field.present {
			missing = append(missing, field.name)
		}
	}
	if f.Patch != nil {
		for _, field := range []struct {
			name    string
			present bool
		}{{"patch.height", f.Patch.Height != nil}, {"patch.width", f.Patch.Width != nil}, {"patch.depth", f.Patch.Depth != nil}} {
			if !field.present {
				missing = append(missing, field.name)
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing field(s) %s", strings.Join(missing, ", "))
	}
	if *f.Layout != ModelLayout {
		return nil, fmt.Errorf("unknown atom layout %q", *f.Layout)
	}
	m, r, k := *f.M, *f.R, *f.K
	if m < 1 || r < 1 || k < 1 || m > maxModelDim || r > maxModelDim || k > maxModelDim {
		return nil, fmt.Errorf("bad dictionary size m=%d r=%d k=%d", m, r, k)
	}
	atoms := *f.Atoms
	if len(atoms) != r {
		return nil, fmt.Errorf("%d atoms, but r = %d", len(atoms), r)
	}
	for j, atom := range atoms {
		if len(atom) != k {
			return nil, fmt.Errorf("atom %d has %d bands, but k = %d", j+1, len(atom), k)
		}
		for t, band := range atom {
			if len(band) != m {
				return nil, fmt.Errorf("atom %d band %d has %d numbers, but m = %d", j+1, t+1, len(band), m)
			}
		}
	}
	model := &Model{
		Description: f.Description,
		CreatedBy:   f.CreatedBy,
		Patch:       PatchShape{Height: *f.Patch.Height, Width: *f.Patch.Width, Depth: *f.Patch.Depth},
		Beta:        *f.Beta,
		Sigma:       f.Sigma,
		Seed:        *f.Seed,
		Iterations:  *f.Iterations,
		Objective:   *f.Objective,
		Atoms:       tproduct.NewTensor(m, r, k),
	}
	// atoms[j][t][i] = D(i,j,t) is the order of Tensor.Data.
	pos := 0
	for _, atom := range atoms {
		for _, band := range atom {
			pos += copy(model.Atoms.Data[pos:], band)
		}
	}
	if err := model.validate(); err != nil {
		return nil, err
	}
	return model, nil
}
