package shard

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"tdsc/internal/msi"
)

// TestShareCovers checks that the shares of any count of shards cover n
// items once each, in order, and differ in length by at most one.
func TestShareCovers(t *testing.T) {
	for n := range 40 {
		for count := 1; count <= 9; count++ {
			next, least, most := 0, n, 0
			for i := 1; i <= count; i++ {
				lo, hi := Spec{i, count}.Share(n)
				if lo != next || hi < lo {
					t.Fatalf("Share(%d) of %d/%d = [%d, %d), want it to start at %d", n, i, count, lo, hi, next)
				}
				next, least, most = hi, min(least, hi-lo), max(most, hi-lo)
			}
			if next != n || most-least > 1 {
				t.Fatalf("%d shards of %d items: end %d, lengths %d to %d", count, n, next, least, most)
			}
		}
	}
}

// randomCube returns an h×w×b cube of random values, NaN among them.
func randomCube(rng *rand.Rand, h, w, b int) *msi.Cube {
	c := msi.NewCube(h, w, b)
	for i := range c.Data {
		c.Data[i] = rng.NormFloat64() * 100
	}
	c.Data[rng.IntN(len(c.Data))] = math.NaN()
	return c
}

// TestPartsRoundTrip writes a random cube's lines as the parts of three
// shards, in cores of random heights, and checks that the parts give back
// every line, bit for bit, in order, with the processing line of the shard
// that holds the last line; a missing part or one of another key is not
// ready.
func TestPartsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const h, w, b = 23, 5, 3
	cube := randomCube(rng, h, w, b)
	set := Set{Out: filepath.Join(t.TempDir(), "out.hdr"), Count: 3, Key: "k"}
	cuts := []int{0, 7, 7, h} // the second shard has no lines
	for i := 1; i <= 3; i++ {
		if _, ok, err := set.Ready(); ok || err != nil {
			t.Fatalf("ready with %d of 3 parts: %v", i-1, err)
		}
		p, err := set.Create(i, w, b)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := cuts[i-1], cuts[i]
		for y := lo; y < hi; {
			n := min(hi-y, 1+rng.IntN(5))
			if err := p.WriteLines(cube.Crop(y, 0, 0, n, w, b), y); err != nil {
				t.Fatal(err)
			}
			y += n
		}
		if err := p.Commit("shard " + string(rune('0'+i))); err != nil {
			t.Fatal(err)
		}
		if !set.Done(i) {
			t.Fatalf("part %d not done once committed", i)
		}
	}
	if (Set{Out: set.Out, Count: 3, Key: "other"}).Done(1) {
		t.Error("a part of key k is done for key other")
	}
	parts, ok, err := set.Ready()
	if !ok || err != nil {
		t.Fatalf("not ready with every part: %v", err)
	}
	if got := parts.Processing(); got != "shard 3" {
		t.Errorf("processing %q, want the last shard's", got)
	}
	got := msi.NewCube(h, w, b)
	next := 0
	err = parts.Each(func(c *msi.Cube, y0 int) error {
		if y0 != next {
			t.Fatalf("core at line %d, want %d", y0, next)
		}
		for bb := range b {
			for y := range c.Height {
				for x := range w {
					got.Set(y0+y, x, bb, c.At(y, x, bb))
				}
			}
		}
		next += c.Height
		return nil
	})
	if err != nil || next != h {
		t.Fatalf("Each: %v, %d lines", err, next)
	}
	for i := range cube.Data {
		if math.Float64bits(got.Data[i]) != math.Float64bits(cube.Data[i]) {
			t.Fatalf("value %d: %v, want %v", i, got.Data[i], cube.Data[i])
		}
	}
	if _, ok, _ := (Set{Out: set.Out, Count: 3, Key: "other"}).Ready(); ok {
		t.Error("parts of key k ready for key other")
	}
	// A part cut short is an error naming it, not a part.
	path := set.PartPath(2)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := set.Ready(); err == nil {
		t.Error("a part cut short is ready")
	}
	// What a shard killed outright leaves: its part's temporary file.
	stray := filepath.Join(filepath.Dir(set.Out), "."+filepath.Base(set.PartPath(1))+".tmp-123")
	if err := os.WriteFile(stray, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	set.Clean()
	if names, _ := os.ReadDir(filepath.Dir(set.Out)); len(names) != 0 {
		t.Errorf("Clean left %v", names)
	}
}

// TestAbortLeavesNothing checks that an aborted part leaves no file.
func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p, err := Set{Out: filepath.Join(dir, "o.npy"), Count: 2, Key: "k"}.Create(1, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteLines(msi.NewCube(3, 2, 2), 0); err != nil {
		t.Fatal(err)
	}
	p.Abort()
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("an aborted part left %v", names)
	}
}

// TestClaim checks that one claim at a time is granted, that a released
// claim can be made again, and that a claim of an ended process of this
// host is taken over while one of a running process or another host is
// not.
func TestClaim(t *testing.T) {
	set := Set{Out: filepath.Join(t.TempDir(), "o.hdr"), Count: 2, Key: "k"}
	release, ok, err := set.Claim()
	if !ok || err != nil {
		t.Fatalf("first claim: %v, %v", ok, err)
	}
	if _, ok, err := set.Claim(); ok || err != nil {
		t.Fatalf("second claim while the first holds: %v, %v", ok, err)
	}
	release()
	host, _ := os.Hostname()
	for _, c := range []struct {
		holder string
		taken  bool
	}{
		{host + " 999999999", true},       // no such process
		{host + " 1", false},              // init runs
		{"another-host 999999999", false}, // cannot be asked
		{"garbage", false},                // not a claim this program made
	} {
		if err := os.WriteFile(set.ClaimPath(), []byte(c.holder+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		release, ok, err := set.Claim()
		if ok != c.taken || err != nil {
			t.Errorf("claim held by %q: taken %v (%v), want %v", c.holder, ok, err, c.taken)
		}
		if ok {
			release()
		}
		os.Remove(set.ClaimPath())
	}
	if names, _ := os.ReadDir(filepath.Dir(set.Out)); len(names) != 0 {
		t.Errorf("claims left %v", names)
	}
}
