package batch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"1/1": {1, 1}, "2/3": {2, 3}, "3/3": {3, 3}, " 4 / 10 ": {4, 10}} {
		got, err := ParseShard(in)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"0/2": "must be from 1 to 2", "3/2": "must be from 1 to 2", "-1/2": "must be from 1 to 2",
		"1/0": "at least 1", "x/y": "want I/N", "1": "want I/N", "": "want I/N", "/": "want I/N", "1/2/3": "want I/N", "1.5/2": "want I/N",
	} {
		_, err := ParseShard(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q): got error %v, want %q", in, err, want)
		}
	}
}

// randomResolved is a plan of random size with made-up scenes.
func randomResolved(rng *rand.Rand) *Resolved {
	r := &Resolved{Root: "/r"}
	for i := range 1 + rng.IntN(5) {
		r.Scenes = append(r.Scenes, Scene{Name: fmt.Sprintf("s%d", i), Path: fmt.Sprintf("/d/s%d", i)})
	}
	for i := range 1 + rng.IntN(4) {
		r.Sigmas = append(r.Sigmas, float64(5*(i+1)))
	}
	for i := range 1 + rng.IntN(3) {
		r.Seeds = append(r.Seeds, uint64(i+1))
	}
	for i := range 1 + rng.IntN(3) {
		r.Methods = append(r.Methods, ResolvedMethod{Label: fmt.Sprintf("m%d", i), Slug: fmt.Sprintf("m%d", i), Name: "a", Index: i})
	}
	return r
}

// TestShardsPartition checks on random plans that the shards of any count
// are disjoint, cover every cell, keep every group whole, and differ in
// size by at most one group.
func TestShardsPartition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		r := randomResolved(rng)
		groups := r.Groups()
		all := map[string]bool{}
		for _, g := range groups {
			if len(g.Cells) != len(r.Methods) {
				t.Fatalf("group %s has %d cells, want %d", g.Dir(), len(g.Cells), len(r.Methods))
			}
			for _, c := range g.Cells {
				if c.GroupDir() != g.Dir() {
					t.Fatalf("cell %s in group %s", c.ID(), g.Dir())
				}
				all[c.ID()] = true
			}
		}
		if len(all) != len(r.Scenes)*len(r.Sigmas)*len(r.Seeds)*len(r.Methods) {
			t.Fatalf("%d distinct cells, want the grid's %d", len(all), len(r.Scenes)*len(r.Sigmas)*len(r.Seeds)*len(r.Methods))
		}
		n := 1 + rng.IntN(8)
		seen := map[string]int{}
		lo, hi := len(groups), 0
		for i := 1; i <= n; i++ {
			part := Shard{i, n}.Select(groups)
			lo, hi = min(lo, len(part)), max(hi, len(part))
			for _, g := range part {
				for _, c := range g.Cells {
					if prev, ok := seen[c.ID()]; ok {
						t.Fatalf("cell %s in shards %d and %d of %d", c.ID(), prev, i, n)
					}
					seen[c.ID()] = i
				}
			}
		}
		if len(seen) != len(all) {
			t.Fatalf("%d shards cover %d of %d cells", n, len(seen), len(all))
		}
		if hi-lo > 1 {
			t.Fatalf("%d shards of %d groups hold from %d to %d groups", n, len(groups), lo, hi)
		}
	}
}

// TestShardIndependentOfListOrder checks that the shard of a cell does not
// depend on the order in which the plan lists scenes, σ and seeds (Resolve
// sorts them; Groups must follow that order).
func TestShardIndependentOfListOrder(t *testing.T) {
	dir := sceneTree(t, []string{"a", "b", "c"}, nil)
	assign := func(scenes []string, sigmas []float64, seeds []uint64) map[string]int {
		r, err := Resolve(&Plan{Scenes: scenes, Sigmas: sigmas, Seeds: seeds, Methods: []Method{{Name: "a"}, {Name: "b"}}, Out: "o"}, dir, acceptAll)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for i := 1; i <= 4; i++ {
			for _, g := range (Shard{i, 4}).Select(r.Groups()) {
				for _, c := range g.Cells {
					out[c.ID()] = i
				}
			}
		}
		return out
	}
	one := assign([]string{"a", "b", "c"}, []float64{10, 20}, []uint64{1, 2})
	two := assign([]string{"c", "a", "b"}, []float64{20, 10}, []uint64{2, 1})
	if fmt.Sprint(one) != fmt.Sprint(two) {
		t.Errorf("shards depend on the plan's order:\n%v\n%v", one, two)
	}
}

func TestOnly(t *testing.T) {
	r := &Resolved{Scenes: []Scene{{"x", "/x"}, {"y", "/y"}}, Sigmas: []float64{10, 2.5}, Seeds: []uint64{1},
		Methods: []ResolvedMethod{{Label: "a", Slug: "a", Name: "a"}, {Label: "b", Slug: "b", Name: "b", Index: 1}}}
	groups := r.Groups()
	got, err := Only(groups, []string{"y/sigma2.5-seed1/b", "x/sigma10-seed1/a.json", "x/sigma10-seed1/b"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, g := range got {
		for _, c := range g.Cells {
			ids = append(ids, c.ID())
		}
	}
	if want := []string{"x/sigma10-seed1/a", "x/sigma10-seed1/b", "y/sigma2.5-seed1/b"}; !slices.Equal(ids, want) {
		t.Errorf("Only: %v, want %v", ids, want)
	}
	if _, err := Only(groups, []string{"x/sigma10-seed1/c"}); err == nil || !strings.Contains(err.Error(), "not a cell of the plan") {
		t.Errorf("unknown id: got error %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	base := Cell{Scene: Scene{"s", "/d/s"}, Sigma: 10, Seed: 1, Method: ResolvedMethod{Label: "l", Slug: "l", Name: "a", Flags: []string{"--k=1"}}}
	fp := base.Fingerprint()
	if len(fp) != 16 || fp != base.Fingerprint() {
		t.Fatalf("fingerprint %q is not 16 stable hex digits", fp)
	}
	same := base
	same.Method.Label, same.Method.Slug, same.Method.Index = "other", "other", 3
	if same.Fingerprint() != fp {
		t.Errorf("the label or the method's place changed the fingerprint")
	}
	for name, edit := range map[string]func(c *Cell){
		"scene path": func(c *Cell) { c.Scene.Path = "/e/s" },
		"sigma":      func(c *Cell) { c.Sigma = 10.5 },
		"seed":       func(c *Cell) { c.Seed = 2 },
		"method":     func(c *Cell) { c.Method.Name = "b" },
		"flags":      func(c *Cell) { c.Method.Flags = []string{"--k=2"} },
		"no flags":   func(c *Cell) { c.Method.Flags = nil },
	} {
		c := base
		edit(&c)
		if c.Fingerprint() == fp {
			t.Errorf("changing the %s kept the fingerprint", name)
		}
	}
}
