// Package batch runs tdsc over a dataset: every cell of the grid scene × noise
// level σ × noise seed × method is denoised once, scored against its clean
// scene, and its result kept as a small JSON file, so that a run can be
// stopped at any time, resumed, and split into shards that run on different
// machines or in parallel on one.
//
// A Plan names the scenes (paths or glob patterns), the noise levels, the
// seeds, the methods (each a denoise method, its flags, and a label that
// names its column in reports) and the output root. Resolve checks all of
// it before anything runs (scenes exist, labels and scene names are
// distinct, every method's flags apply to it) and returns the cells in a
// fixed order: by scene name, then σ, then seed, then the plan's method
// order. Cells that share a noisy cube (scene, σ, seed) form a Group.
//
// Layout under the root (see Cell.ID):
//
//	ROOT/SCENE/sigmaS-seedN/noisy.hdr, noisy.img  the noisy cube of the group
//	ROOT/SCENE/sigmaS-seedN/LABEL.json            the result of one cell
//	ROOT/SCENE/sigmaS-seedN/LABEL.hdr, LABEL.img  its denoised cube (kept on request)
//
// Scenes are cubes of any format that package formats reads (a band-stack
// folder, ENVI, .npy, .mat[:VAR]), read with the format's automatic scale,
// so every cube of a cell is on the working [0, 255] scale: the clean
// scene as read, the noisy cube (ENVI float32 stores the working scale as
// it is, whatever the scene's format) and the denoised one, which the
// child tdsc denoise reads and writes as ENVI on that scale. A .npy of
// reflectance in [0, 1] is thus noised and scored ×255, as tdsc noise and
// tdsc eval would.
//
// Every file is written atomically (package atomicfile), so an interrupted
// run leaves either a whole result or none. A result records the
// fingerprint of its cell (Cell.Fingerprint: the scene's path, σ, seed,
// method and canonical flags); a later run skips a cell whose result has
// the same fingerprint and redoes one whose fingerprint differs.
//
// Sharding (Shard) deals the groups, not the cells, round-robin over the
// shards, so a noisy cube is made by one process and the shards are
// disjoint and cover the plan whatever order the plan lists things in.
package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/formats"
)

// Plan is a batch run as a plan file holds it or the command line gives it.
// Relative paths in a plan file are relative to the file's folder.
type Plan struct {
	// Scenes are clean cubes in any format tdsc reads (band-stack folders,
	// ENVI .hdr files, .npy files, .mat files or FILE.mat:VAR), each a
	// path or a glob pattern (filepath.Match syntax) that must match at
	// least one.
	Scenes []string `json:"scenes"`
	// Sigmas are the noise levels on the [0, 255] scale.
	Sigmas []float64 `json:"sigmas"`
	// Seeds are the seeds of the noise generator; none means [1].
	Seeds []uint64 `json:"seeds,omitempty"`
	// Methods are the denoisers to run on every noisy cube.
	Methods []Method `json:"methods"`
	// Out is the output root.
	Out string `json:"out"`
}

// Method is one column of the grid: a denoise method with its flags.
type Method struct {
	// Label names the method's results (file names and report columns);
	// empty means the method's name followed by its flags.
	Label string `json:"label,omitempty"`
	// Name is the denoise method (tdsc denoise --method).
	Name string `json:"method"`
	// Flags are further tdsc denoise flags, one word each, e.g.
	// ["--atoms", "30"].
	Flags []string `json:"flags,omitempty"`
}

// ReadPlan reads a plan file. Unknown fields, trailing data and syntax
// errors are errors that name the file and, where JSON says, the line.
func ReadPlan(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("plan %s: no such file", path)
		}
		return nil, fmt.Errorf("plan %s: %v", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("plan %s: %s", path, jsonProblem(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("plan %s: more data after the plan's object", path)
	}
	return &p, nil
}

// jsonProblem words a decoding error of data with the line it happened on,
// which encoding/json gives only as a byte offset.
func jsonProblem(data []byte, err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("line %d: %v", lineAt(data, syntax.Offset), err)
	case errors.As(err, &typ):
		return fmt.Sprintf("line %d: %q must be %s, not a JSON %s", lineAt(data, typ.Offset), typ.Field, kindOf(typ.Type.String()), typ.Value)
	case err == io.EOF:
		return "empty file: want a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	// Unknown fields come as `json: unknown field "x"`.
	return strings.TrimPrefix(err.Error(), "json: ")
}

func lineAt(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}

// kindOf names a Go type of the plan in JSON words.
func kindOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "float"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "int"):
		return "a number"
	}
	return "an object"
}

// CheckMethod checks that name is a denoise method and that flags (words of
// a command line) are tdsc denoise flags that apply to it, that a batch
// may set and whose values the method can use at every noise level of
// sigmas, and returns them in a canonical form: one "--name=value" word
// per flag, sorted by name, relative paths made absolute against baseDir.
// The command line supplies it, since it owns the denoise flags.
type CheckMethod func(name string, flags []string, baseDir string, sigmas []float64) (canonical []string, err error)

// Resolved is a checked plan.
type Resolved struct {
	// Root is the output root, absolute.
	Root string
	// Scenes are the clean cubes, sorted by name.
	Scenes []Scene
	// Sigmas and Seeds are in increasing order.
	Sigmas []float64
	Seeds  []uint64
	// Methods are in the plan's order.
	Methods []ResolvedMethod
}

// Scene is one clean cube of a plan.
type Scene struct {
	// Name names the scene's folder under the root: the base name of its
	// band-stack folder, or of its file without the extension.
	Name string
	// Path is the cube's absolute path.
	Path string
}

// ResolvedMethod is a checked Method.
type ResolvedMethod struct {
	Label string
	// Slug is Label made a file name (see slug).
	Slug string
	Name string
	// Flags are the canonical flags (CheckMethod).
	Flags []string
	// Index is the method's place in the plan, from 0.
	Index int
}

// reservedSlug is the stem of the noisy cube's files, so no method may
// have it.
const reservedSlug = "noisy"

// Resolve checks p and expands its scene patterns. baseDir is where
// relative paths start (the plan file's folder, or the working folder for
// a plan given on the command line). check validates each method.
func Resolve(p *Plan, baseDir string, check CheckMethod) (*Resolved, error) {
	r := &Resolved{}
	if p.Out == "" {
		return nil, errors.New("no output root: give --out (or \"out\" in the plan)")
	}
	r.Root = absFrom(baseDir, p.Out)
	if fi, err := os.Stat(r.Root); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("output root %s is a file, not a folder", p.Out)
	}

	if len(p.Scenes) == 0 {
		return nil, errors.New("no scenes: give --scenes (or \"scenes\" in the plan)")
	}
	scenes, err := expandScenes(p.Scenes, baseDir)
	if err != nil {
		return nil, err
	}
	r.Scenes = scenes

	if len(p.Sigmas) == 0 {
		return nil, errors.New("no noise levels: give --sigma (or \"sigmas\" in the plan)")
	}
	for _, s := range p.Sigmas {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("noise level σ = %v: must be a positive number", s)
		}
		if slices.Contains(r.Sigmas, s) {
			return nil, fmt.Errorf("noise level σ = %v is listed twice", s)
		}
		r.Sigmas = append(r.Sigmas, s)
	}
	slices.Sort(r.Sigmas)

	seeds := p.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{1}
	}
	for _, s := range seeds {
		if slices.Contains(r.Seeds, s) {
			return nil, fmt.Errorf("seed %d is listed twice", s)
		}
		r.Seeds = append(r.Seeds, s)
	}
	slices.Sort(r.Seeds)

	if len(p.Methods) == 0 {
		return nil, errors.New("no methods: give --method (or \"methods\" in the plan)")
	}
	bySlug := map[string]string{}
	for i, m := range p.Methods {
		label := m.Label
		if label == "" {
			label = strings.Join(append([]string{m.Name}, m.Flags...), " ")
		}
		where := fmt.Sprintf("method %q", label)
		if m.Name == "" {
			return nil, fmt.Errorf("%s: no method name (\"method\": one of tdsc denoise's methods)", where)
		}
		flags, err := check(m.Name, m.Flags, baseDir, r.Sigmas)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		s, err := slug(label)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if other, ok := bySlug[s]; ok {
			if other == label {
				return nil, fmt.Errorf("%s is listed twice", where)
			}
			return nil, fmt.Errorf("the labels %q and %q name the same file %s.json: change one", other, label, s)
		}
		bySlug[s] = label
		r.Methods = append(r.Methods, ResolvedMethod{Label: label, Slug: s, Name: m.Name, Flags: flags, Index: i})
	}
	return r, nil
}

// absFrom returns path made absolute against baseDir, cleaned.
func absFrom(baseDir, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(baseDir, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// expandScenes turns scene paths and patterns into scenes sorted by name.
// A pattern that matches nothing, a path that does not exist, a match that
// is not a cube, and two cubes of the same name are errors. A path given
// twice (by two patterns) counts once, and so does a cube of several files
// matched by more than one (an ENVI cube by its .hdr and its .img).
func expandScenes(patterns []string, baseDir string) ([]Scene, error) {
	byName := map[string]Scene{}
	for _, pat := range patterns {
		full := absFrom(baseDir, pat)
		var matches []string
		if hasMeta(pat) {
			m, err := filepath.Glob(full)
			if err != nil {
				return nil, fmt.Errorf("scenes: bad pattern %q: %v", pat, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("scenes: %s matches nothing", pat)
			}
			matches = m
		} else {
			if !exists(full) {
				return nil, fmt.Errorf("scene %s: no such file or folder", pat)
			}
			matches = []string{full}
		}
		for _, m := range matches {
			s, err := sceneAt(m)
			if err != nil {
				return nil, err
			}
			if old, ok := byName[s.Name]; ok && old.Path != s.Path {
				return nil, fmt.Errorf("scenes %s and %s have the same name %s: results would share a folder", old.Path, s.Path, s.Name)
			}
			byName[s.Name] = s
		}
	}
	scenes := make([]Scene, 0, len(byName))
	for _, s := range byName {
		scenes = append(scenes, s)
	}
	slices.SortFunc(scenes, func(a, b Scene) int { return strings.Compare(a.Name, b.Name) })
	return scenes, nil
}

func hasMeta(pattern string) bool { return strings.ContainsAny(pattern, `*?[\`) }

// exists reports whether the scene path is on disk: the path itself, or
// the file it names a part of (FILE.mat of FILE.mat:VAR).
func exists(path string) bool {
	if _, err := os.Stat(path); err == nil {
		return true
	}
	_, err := os.Stat(formats.ForWrite(path).Outputs(path)[0])
	return err == nil
}

// sceneAt names the cube at path: a folder by its name, a file by its
// name without the extension (a MAT-file variable by its file's). A cube of several files (ENVI) has one path
// whichever of them was matched: the first of its files that exists (its
// .hdr).
func sceneAt(path string) (Scene, error) {
	f, err := formats.ForRead(path)
	if err != nil {
		return Scene{}, fmt.Errorf("scene %s: not a cube (want %s)", path, formats.Paths())
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return Scene{Name: filepath.Base(path), Path: path}, nil
	}
	if outs := f.Outputs(path); slices.Contains(outs, path) {
		for _, o := range outs {
			if fi, err := os.Stat(o); err == nil && fi.Mode().IsRegular() {
				path = o
				break
			}
		}
	}
	file := filepath.Base(f.Outputs(path)[0]) // FILE.mat of FILE.mat:VAR
	return Scene{Name: strings.TrimSuffix(file, filepath.Ext(file)), Path: path}, nil
}

// slug makes a label a file name: every run of characters other than ASCII
// letters, digits, '.', '+', '-' and '_' becomes one '_'. It must start with
// a letter or digit and may not be the noisy cube's name.
func slug(label string) (string, error) {
	var b strings.Builder
	under := false
	for _, r := range label {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".+-_", r))
		switch {
		case ok:
			b.WriteRune(r)
			under = false
		case !under:
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.TrimRight(b.String(), "_")
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z' || s[0] >= '0' && s[0] <= '9') {
		return "", fmt.Errorf("label %q must start with a letter or digit", label)
	}
	if strings.EqualFold(s, reservedSlug) {
		return "", fmt.Errorf("label %q is taken by the noisy cube's files", label)
	}
	return s, nil
}

// formatSigma spells σ in folder names and cell ids: the shortest decimal
// that reads back as the same number.
func formatSigma(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }
