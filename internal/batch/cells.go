package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"tdsc/internal/shard"
)

// Cell is one denoising run of a plan: a method on the noisy cube of a
// scene at noise level Sigma from seed Seed.
type Cell struct {
	Scene  Scene
	Sigma  float64
	Seed   uint64
	Method ResolvedMethod
}

// GroupDir is the cell's folder under the root, shared by the methods of
// its noisy cube: SCENE/sigmaS-seedN (always with forward slashes).
func (c Cell) GroupDir() string {
	return groupDir(c.Scene.Name, c.Sigma, c.Seed)
}

func groupDir(scene string, sigma float64, seed uint64) string {
	return scene + "/sigma" + formatSigma(sigma) + "-seed" + strconv.FormatUint(seed, 10)
}

// ID names the cell: SCENE/sigmaS-seedN/LABEL, its result file under the
// root without ".json". It is what --only takes and --list prints.
func (c Cell) ID() string { return path.Join(c.GroupDir(), c.Method.Slug) }

// fingerprintFormat changes when the meaning of a result changes (a new
// noise protocol, a new way of scoring), so that older results are redone.
const fingerprintFormat = 1

// Fingerprint identifies what the cell computes: the scene's path, σ, the
// seed, the method and its canonical flags. The label, the tdsc version and
// the thread count (which does not change any output) are not part of it.
func (c Cell) Fingerprint() string {
	b, _ := json.Marshal(struct {
		Format int      `json:"format"`
		Scene  string   `json:"scene"`
		Sigma  float64  `json:"sigma"`
		Seed   uint64   `json:"seed"`
		Method string   `json:"method"`
		Flags  []string `json:"flags"`
	}{fingerprintFormat, c.Scene.Path, c.Sigma, c.Seed, c.Method.Name, c.Method.Flags})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Group is the cells that share a noisy cube, in the plan's method order.
type Group struct {
	Scene Scene
	Sigma float64
	Seed  uint64
	Cells []Cell
}

// Dir is the group's folder under the root (Cell.GroupDir).
func (g Group) Dir() string { return groupDir(g.Scene.Name, g.Sigma, g.Seed) }

// Groups returns every group of the plan, by scene name, then σ, then seed.
func (r *Resolved) Groups() []Group {
	var groups []Group
	for _, sc := range r.Scenes {
		for _, sigma := range r.Sigmas {
			for _, seed := range r.Seeds {
				g := Group{Scene: sc, Sigma: sigma, Seed: seed}
				for _, m := range r.Methods {
					g.Cells = append(g.Cells, Cell{Scene: sc, Sigma: sigma, Seed: seed, Method: m})
				}
				groups = append(groups, g)
			}
		}
	}
	return groups
}

// Shard is the Index-th (from 1) of Count disjoint parts of a plan.
type Shard struct{ Index, Count int }

// ParseShard reads "I/N" with 1 ≤ I ≤ N (shard.Parse).
func ParseShard(s string) (Shard, error) {
	sp, err := shard.Parse(s)
	return Shard(sp), err
}

// Select returns the groups of shard s: the groups whose place in groups
// (from 0) is Index-1 modulo Count. Dealing round-robin spreads the scenes
// and noise levels over the shards; keeping a group whole means its noisy
// cube is made once, by one process.
func (s Shard) Select(groups []Group) []Group {
	var out []Group
	for i, g := range groups {
		if i%s.Count == s.Index-1 {
			out = append(out, g)
		}
	}
	return out
}

// Only returns the groups cut down to the cells whose ids are in ids, or
// an error naming an id that is not a cell of the plan.
func Only(groups []Group, ids []string) ([]Group, error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[strings.TrimSuffix(strings.TrimSpace(id), ".json")] = true
	}
	var out []Group
	for _, g := range groups {
		cut := g
		cut.Cells = nil
		for _, c := range g.Cells {
			if want[c.ID()] {
				cut.Cells = append(cut.Cells, c)
				delete(want, c.ID())
			}
		}
		if len(cut.Cells) > 0 {
			out = append(out, cut)
		}
	}
	for _, id := range ids {
		id = strings.TrimSuffix(strings.TrimSpace(id), ".json")
		if want[id] {
			return nil, fmt.Errorf("--only %s: not a cell of the plan (tdsc batch --list prints them)", id)
		}
	}
	return out, nil
}

// CellCount is the number of cells in groups.
func CellCount(groups []Group) int {
	n := 0
	for _, g := range groups {
		n += len(g.Cells)
	}
	return n
}
