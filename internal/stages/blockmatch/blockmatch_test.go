package blockmatch

import (
	"math/rand/v2"
	"slices"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/testenv/cubetest"
)

// bruteGroup is the definition: every candidate's distance by the full
// sum, sorted by (distance, flat index), the reference moved first.
func bruteGroup(f *msi.Cube, y, x int, o Options, k int) ([]int32, []float64) {
	type c struct {
		d   float64
		pos int32
	}
	var cs []c
	r := o.Window / 2
	for y1 := max(0, y-r); y1 <= min(f.Height-o.Patch, y+r); y1++ {
		for x1 := max(0, x-r); x1 <= min(f.Width-o.Patch, x+r); x1++ {
			d := 0.0
			for b := range f.Bands {
				for i := range o.Patch {
					for j := range o.Patch {
						v := f.At(y+i, x+j, b) - f.At(y1+i, x1+j, b)
						d += v * v
					}
				}
			}
			if y1 == y && x1 == x {
				d = -1
			}
			cs = append(cs, c{d, int32(y1*f.Width + x1)})
		}
	}
	slices.SortFunc(cs, func(a, b c) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		return int(a.pos - b.pos)
	})
	pos, dist := make([]int32, k), make([]float64, k)
	for i := range k {
		pos[i], dist[i] = cs[i].pos, max(cs[i].d, 0)
	}
	return pos, dist
}

func TestMatchAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		h, w, c, levels int
		o               Options
	}{
		{20, 17, 3, 0, Options{Patch: 4, Step: 3, Window: 7, K: 10}},
		{23, 19, 2, 3, Options{Patch: 3, Step: 2, Window: 9, K: 16}}, // many ties
		{9, 8, 1, 2, Options{Patch: 2, Step: 2, Window: 31, K: 40}},  // window larger than the image
		{6, 7, 2, 0, Options{Patch: 4, Step: 1, Window: 3, K: 50}},   // K clamped
		{12, 12, 4, 0, Options{Patch: 1, Step: 1, Window: 5, K: 7}},
	} {
		f := cubetest.Normal(rng, tc.h, tc.w, tc.c)
		if tc.levels > 0 {
			f = cubetest.Levels(rng, tc.h, tc.w, tc.c, tc.levels)
		}
		m, err := New(tc.h, tc.w, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		rows, cols := m.Refs()
		k := m.K()
		ws := m.NewWorkspace()
		dst, dist := make([]int32, cols*k), make([]float64, cols*k)
		for r := range rows {
			m.MatchRow(dst, dist, f, r, ws)
			for j := range cols {
				y, x := refPos(m, r*cols+j)
				wantPos, wantDist := bruteGroup(f, y, x, tc.o, k)
				if !slices.Equal(dst[j*k:(j+1)*k], wantPos) {
					t.Fatalf("%+v ref (%d,%d): group %v, want %v", tc, y, x, dst[j*k:(j+1)*k], wantPos)
				}
				for i, d := range dist[j*k : (j+1)*k] {
					if d-wantDist[i] > 1e-9*(1+wantDist[i]) || wantDist[i]-d > 1e-9*(1+wantDist[i]) {
						t.Fatalf("%+v ref (%d,%d): distance %d = %v, want %v", tc, y, x, i, d, wantDist[i])
					}
				}
			}
		}
		// Every reference row and column position of the grid rule.
		if y, _ := refPos(m, (rows-1)*cols); y != tc.h-tc.o.Patch {
			t.Errorf("%+v: last reference row at %d, want %d", tc, y, tc.h-tc.o.Patch)
		}
	}
}

// refPos returns the top-left pixel of reference ref.
func refPos(m *Matcher, ref int) (y, x int) {
	return m.rowPos[ref/len(m.colPos)], m.colPos[ref%len(m.colPos)]
}

// matchAll matches every reference row of f on threads goroutines, each
// with its own workspace, as the denoisers do, and returns the groups of
// all references, reference by reference.
func matchAll(t *testing.T, m *Matcher, f *msi.Cube, threads int) []int32 {
	rows, cols := m.Refs()
	k := m.K()
	pos := make([]int32, rows*cols*k)
	wss := make([]*Workspace, threads)
	err := parallel.For(t.Context(), rows, threads, func(wi, r int) error {
		if wss[wi] == nil {
			wss[wi] = m.NewWorkspace()
		}
		m.MatchRow(pos[r*cols*k:(r+1)*cols*k], nil, f, r, wss[wi])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

func TestMatchRowThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := cubetest.Levels(rng, 40, 33, 3, 4)
	m, err := New(40, 33, Options{Patch: 4, Step: 3, Window: 11, K: 16})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(matchAll(t, m, f, 1), matchAll(t, m, f, 3)) {
		t.Error("groups differ between 1 and 3 goroutines")
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, o := range []Options{{0, 1, 3, 2}, {4, 0, 3, 2}, {4, 5, 3, 2}, {4, 1, 4, 2}, {4, 1, 3, 0}, {20, 1, 3, 2}} {
		if _, err := New(10, 10, o); err == nil {
			t.Errorf("New(%+v) gave no error", o)
		}
	}
}

func TestMatchRowAllocsAndPanics(t *testing.T) {
	f := cubetest.Normal(rand.New(rand.NewPCG(5, 6)), 30, 30, 2)
	m, _ := New(30, 30, Options{Patch: 4, Step: 3, Window: 9, K: 8})
	_, cols := m.Refs()
	ws := m.NewWorkspace()
	dst := make([]int32, cols*m.K())
	if a := testing.AllocsPerRun(5, func() { m.MatchRow(dst, nil, f, 2, ws) }); a != 0 {
		t.Errorf("MatchRow allocates %v times", a)
	}
	defer func() {
		if recover() == nil {
			t.Error("MatchRow with a short dst did not panic")
		}
	}()
	m.MatchRow(dst[1:], nil, f, 0, ws)
}

func BenchmarkMatchRow(b *testing.B) {
	for _, s := range []struct {
		c int
		o Options
	}{{6, Options{Patch: 4, Step: 3, Window: 31, K: 128}}, {8, Options{Patch: 6, Step: 3, Window: 31, K: 64}}} {
		f := cubetest.Normal(rand.New(rand.NewPCG(1, 1)), 512, 512, s.c)
		m, _ := New(512, 512, s.o)
		_, cols := m.Refs()
		ws := m.NewWorkspace()
		dst := make([]int32, cols*m.K())
		b.Run("", func(b *testing.B) {
			for b.Loop() {
				m.MatchRow(dst, nil, f, 80, ws)
			}
		})
	}
}

// TestSelectSmallest checks that the k smallest candidates, sorted, are the
// first k of a full sort, with ties in distance among them.
func TestSelectSmallest(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for _, n := range []int{1, 2, 3, 10, 961} {
		for _, k := range []int{1, 2, n / 4, n / 2, n - 1, n} {
			if k < 1 || k > n {
				continue
			}
			c := make([]cand, n)
			for i := range c {
				c[i] = cand{d: float64(rng.IntN(n/3 + 1)), pos: int32(rng.Perm(n)[0]*n + i)}
			}
			want := slices.Clone(c)
			slices.SortFunc(want, compareCand)
			selectSmallest(c, k)
			slices.SortFunc(c[:k], compareCand)
			if !slices.Equal(c[:k], want[:k]) {
				t.Fatalf("n %d, k %d: the k smallest are %v, want %v", n, k, c[:k], want[:k])
			}
		}
	}
}
