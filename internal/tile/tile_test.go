package tile

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/msi"
)

// Every plan covers the lines once with its cores, in order; cores and
// reads start on the alignment; reads hold the halo, clipped to the cube;
// cores have the lines asked for, at most MaxLines when it is set.
func TestPlan(t *testing.T) {
	for _, g := range []Geometry{{0, 1, 0}, {10, 10, 0}, {12, 6, 0}, {32, 1, 0}, {4, 2, 16}, {6, 6, 6}} {
		for height := 1; height <= 70; height++ {
			for _, lines := range []int{1, 7, 10, 24, 100} {
				strips := Plan(height, lines, g)
				want := lines
				if g.MaxLines > 0 {
					want = min(want, g.MaxLines)
				}
				want = max(g.Align, want/g.Align*g.Align)
				next := 0
				for i, s := range strips {
					name := fmt.Sprintf("Plan(%d, %d, %+v) strip %d %+v", height, lines, g, i, s)
					if s.Core.Start != next || s.Core.End <= s.Core.Start {
						t.Fatalf("%s: core does not follow line %d", name, next)
					}
					if s.Core.Len() != want && s.Core.End != height {
						t.Fatalf("%s: core of %d lines, want %d", name, s.Core.Len(), want)
					}
					if s.Core.Start%g.Align != 0 || s.Read.Start%g.Align != 0 {
						t.Fatalf("%s: not aligned to %d", name, g.Align)
					}
					if s.Read.Start != max(0, s.Core.Start-g.Halo) || s.Read.End != min(height, s.Core.End+g.Halo) {
						t.Fatalf("%s: read is not the core with a halo of %d", name, g.Halo)
					}
					next = s.Core.End
				}
				if next != height {
					t.Fatalf("Plan(%d, %d, %+v) covers %d lines", height, lines, g, next)
				}
			}
		}
	}
	for _, g := range []Geometry{{5, 2, 0}, {-2, 1, 0}, {4, 0, 0}, {4, 2, -2}, {4, 2, 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Plan with %+v did not panic", g)
				}
			}()
			Plan(10, 4, g)
		}()
	}
}

// Run writes every core once, as fn computes it on the strip as read: a
// function of the line's place in its strip and of the strip's lines shows
// both.
func TestRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := msi.NewCube(23, 4, 3)
	for i := range in.Data {
		in.Data[i] = rng.Float64()
	}
	strips := Plan(in.Height, 5, Geometry{Halo: 3, Align: 1})
	out := msi.NewCube(23, 4, 3)
	var calls []int
	fn := func(_ context.Context, c *msi.Cube) (*msi.Cube, error) {
		r := c.Clone()
		for i := range r.Data {
			r.Data[i] += float64(c.Height)
		}
		return r, nil
	}
	err := Run(context.Background(), Lines{Cube: in}, Lines{Cube: out}, strips, fn, func(done, total int) {
		calls = append(calls, done)
		if total != len(strips) {
			t.Errorf("progress total %d, want %d", total, len(strips))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range strips {
		for y := s.Core.Start; y < s.Core.End; y++ {
			for b := range in.Bands {
				for x := range in.Width {
					if got, want := out.At(y, x, b), in.At(y, x, b)+float64(s.Read.Len()); got != want {
						t.Fatalf("line %d of strip %+v: %v, want %v", y, s, got, want)
					}
				}
			}
		}
	}
	if !slices.Equal(calls, []int{1, 2, 3, 4, 5}) {
		t.Errorf("progress calls %v", calls)
	}

	boom := errors.New("boom")
	if err := Run(context.Background(), Lines{Cube: in}, Lines{Cube: out}, strips, func(context.Context, *msi.Cube) (*msi.Cube, error) {
		return nil, boom
	}, nil); !errors.Is(err, boom) {
		t.Errorf("fn's error: %v", err)
	}
	if err := Run(context.Background(), Lines{Cube: in}, Lines{Cube: out}, strips, func(_ context.Context, c *msi.Cube) (*msi.Cube, error) {
		return msi.NewCube(1, c.Width, c.Bands), nil
	}, nil); err == nil || !strings.Contains(err.Error(), "returned") {
		t.Errorf("a strip of the wrong size: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, Lines{Cube: in}, Lines{Cube: out}, strips, fn, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestLinesFor(t *testing.T) {
	g := Geometry{Halo: 10, Align: 10}
	// 100 samples × 10 bands × 8 bytes = 8000 bytes a line.
	for _, c := range []struct {
		budget int64
		want   int
	}{{8000 * 30, 10}, {8000*39 + 7999, 10}, {8000 * 40, 20}, {8000 * 125, 100}} {
		got, err := LinesFor(c.budget, 100, 10, 8, g)
		if err != nil || got != c.want {
			t.Errorf("LinesFor(%d): %d, %v; want %d", c.budget, got, err, c.want)
		}
	}
	if _, err := LinesFor(8000*30-1, 100, 10, 8, g); err == nil || !strings.Contains(err.Error(), "available") {
		t.Errorf("too small a budget: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{512: "512 B", 1536: "1.5 KiB", 2 << 30: "2.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
