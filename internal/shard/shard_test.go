package shard

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
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

// TestPartsRoundTrip writes the lines of random cubes, one a layer, as
// the parts of three shards, in cores of random heights, and checks that
// the parts give back every line of every layer, bit for bit, in order,
// with the processing line of the shard that holds the last line; a
// missing part is not ready, a part of another key or other layers is an
// *OtherRunError.
func TestPartsRoundTrip(t *testing.T) {
	for _, layers := range []int{1, 3} {
		rng := rand.New(rand.NewPCG(1, uint64(layers)))
		const h, w, b = 23, 5, 3
		cubes := make([]*msi.Cube, layers)
		for l := range cubes {
			cubes[l] = randomCube(rng, h, w, b)
		}
		set := Set{Out: filepath.Join(t.TempDir(), "out.hdr"), Count: 3, Key: "k", Settings: "--a=1\n", Layers: layers}
		cuts := []int{0, 7, 7, h} // the second shard has no lines
		for i := 1; i <= 3; i++ {
			if _, ok, err := set.Ready(); ok || err != nil {
				t.Fatalf("%d layers: ready with %d of 3 parts: %v", layers, i-1, err)
			}
			p, err := set.Create(i, w, b)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := cuts[i-1], cuts[i]
			for y := lo; y < hi; {
				n := min(hi-y, 1+rng.IntN(5))
				lines := make([]*msi.Cube, layers)
				for l, c := range cubes {
					lines[l] = c.Crop(y, 0, 0, n, w, b)
				}
				if err := p.WriteLines(y, lines...); err != nil {
					t.Fatal(err)
				}
				y += n
			}
			if err := p.Commit("shard " + string(rune('0'+i))); err != nil {
				t.Fatal(err)
			}
			if !set.Done(i) {
				t.Fatalf("%d layers: part %d not done once committed", layers, i)
			}
		}
		other := set
		other.Key = "other"
		if other.Done(1) {
			t.Errorf("%d layers: a part of key k is done for key other", layers)
		}
		parts, ok, err := set.Ready()
		if !ok || err != nil {
			t.Fatalf("%d layers: not ready with every part: %v", layers, err)
		}
		if got := parts.Processing(); got != "shard 3" {
			t.Errorf("%d layers: processing %q, want the last shard's", layers, got)
		}
		got := make([]*msi.Cube, layers)
		for l := range got {
			got[l] = msi.NewCube(h, w, b)
		}
		next := 0
		err = parts.Each(func(y0 int, lines []*msi.Cube) error {
			if y0 != next || len(lines) != layers {
				t.Fatalf("%d layers: core at line %d of %d layers, want line %d", layers, y0, len(lines), next)
			}
			for l, c := range lines {
				for bb := range b {
					for y := range c.Height {
						for x := range w {
							got[l].Set(y0+y, x, bb, c.At(y, x, bb))
						}
					}
				}
			}
			next += lines[0].Height
			return nil
		})
		if err != nil || next != h {
			t.Fatalf("%d layers: Each: %v, %d lines", layers, err, next)
		}
		for l := range cubes {
			for i := range cubes[l].Data {
				if math.Float64bits(got[l].Data[i]) != math.Float64bits(cubes[l].Data[i]) {
					t.Fatalf("%d layers: layer %d, value %d: %v, want %v", layers, l, i, got[l].Data[i], cubes[l].Data[i])
				}
			}
		}
		// Lines reads any lines of the first layer, across cores and parts.
		lines, err := parts.Lines()
		if err != nil {
			t.Fatal(err)
		}
		if gh, gw, gb := lines.Size(); gh != h || gw != w || gb != b {
			t.Fatalf("%d layers: Lines of %d×%d×%d, want %d×%d×%d", layers, gh, gw, gb, h, w, b)
		}
		for range 50 {
			y0 := rng.IntN(h)
			n := 1 + rng.IntN(h-y0)
			c, err := lines.ReadLines(y0, n)
			if err != nil {
				t.Fatal(err)
			}
			want := cubes[0].Crop(y0, 0, 0, n, w, b)
			for i := range want.Data {
				if math.Float64bits(c.Data[i]) != math.Float64bits(want.Data[i]) {
					t.Fatalf("%d layers: lines %d–%d, value %d: %v, want %v", layers, y0, y0+n-1, i, c.Data[i], want.Data[i])
				}
			}
		}
		if _, err := lines.ReadLines(h-1, 2); err == nil {
			t.Errorf("%d layers: read past the last line", layers)
		}
		if err := lines.Close(); err != nil {
			t.Fatal(err)
		}
		// Every part is there but of another run: an error that names the
		// first part and says how the settings differ.
		other.Settings = "--a=2\n--b=x\n"
		_, ok, err = other.Ready()
		var oe *OtherRunError
		if ok || !errors.As(err, &oe) || oe.Index != 1 || oe.Path != set.PartPath(1) {
			t.Fatalf("%d layers: parts of key k ready for key other: %v, %v", layers, ok, err)
		}
		if want := "--a=1 there, --a=2 --b=x here"; oe.Differs != want {
			t.Errorf("%d layers: the settings differ by %q, want %q", layers, oe.Differs, want)
		}
		otherLayers := set
		otherLayers.Layers = layers%3 + 1
		if _, _, err := otherLayers.Ready(); !errors.As(err, &oe) {
			t.Errorf("parts of %d layers ready for %d: %v", layers, otherLayers.Layers, err)
		}
		if otherLayers.Done(1) {
			t.Errorf("a part of %d layers is done for %d", layers, otherLayers.Layers)
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
		if _, _, err := set.Ready(); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%d layers: a part cut short is ready: %v", layers, err)
		}
		// What a shard killed outright leaves: its part's temporary file.
		stray := filepath.Join(filepath.Dir(set.Out), "."+filepath.Base(set.PartPath(1))+".tmp-123")
		if err := os.WriteFile(stray, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		set.Clean()
		if names, _ := os.ReadDir(filepath.Dir(set.Out)); len(names) != 0 {
			t.Errorf("%d layers: Clean left %v", layers, names)
		}
	}
}

// TestDiffers checks the message of the settings of a part and of this
// run: what either lacks, in the order of their lines.
func TestDiffers(t *testing.T) {
	for _, c := range []struct{ there, here, want string }{
		{"--a=1\n--b=2\n", "--b=2\n--a=1\n", ""},
		{"--a=1\n", "--a=1\n--m=x\n", "--m=x here and not there"},
		{"--a=1\n--m=x\n", "--a=1\n", "--m=x there and not here"},
		{"--a=1\n", "--a=2\n", "--a=1 there, --a=2 here"},
		{"1\n2\n3\n4\n5\n6\n", "", "1 2 3 4 … there and not here"},
	} {
		if got := differs(c.there, c.here); got != c.want {
			t.Errorf("differs(%q, %q) = %q, want %q", c.there, c.here, got, c.want)
		}
	}
}

// TestWriteLinesChecks checks that a part refuses lines of another number
// of layers or another size.
func TestWriteLinesChecks(t *testing.T) {
	p, err := Set{Out: filepath.Join(t.TempDir(), "o.hdr"), Count: 2, Key: "k", Layers: 2}.Create(1, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Abort()
	for _, layers := range [][]*msi.Cube{
		{msi.NewCube(2, 4, 3)},
		{msi.NewCube(2, 4, 3), msi.NewCube(3, 4, 3)},
		{msi.NewCube(2, 4, 3), msi.NewCube(2, 4, 2)},
	} {
		if err := p.WriteLines(0, layers...); err == nil {
			t.Errorf("a part of 2 layers of 4×3 took %d layers of %d×%d×%d, %d×%d×%d", len(layers),
				layers[0].Height, layers[0].Width, layers[0].Bands, layers[len(layers)-1].Height, layers[len(layers)-1].Width, layers[len(layers)-1].Bands)
		}
	}
}

// TestAbortLeavesNothing checks that an aborted part leaves no file.
func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p, err := Set{Out: filepath.Join(dir, "o.npy"), Count: 2, Key: "k"}.Create(1, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteLines(0, msi.NewCube(3, 2, 2)); err != nil {
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

// TestStageParts: a stage's parts are named apart from the output's, one
// process at a time may claim the writing of each, and Clean removes
// them with their claims.
func TestStageParts(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.hdr")
	set := Set{Out: out, Count: 2, Key: "k"}
	stage := Set{Out: out, Count: 2, Key: "k", Stage: "first-pass"}
	if stage.PartPath(1) == set.PartPath(1) || filepath.Dir(stage.PartPath(1)) != filepath.Dir(out) {
		t.Fatalf("the stage's part %s, the output's %s", stage.PartPath(1), set.PartPath(1))
	}
	p, err := stage.Create(1, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteLines(0, msi.NewCube(3, 2, 1)); err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(""); err != nil {
		t.Fatal(err)
	}
	if !stage.Done(1) || set.Done(1) {
		t.Fatalf("the stage's part done %v, the output's %v: want only the stage's", stage.Done(1), set.Done(1))
	}
	release, ok, err := stage.ClaimPart(2)
	if !ok || err != nil {
		t.Fatalf("first claim of part 2: %v, %v", ok, err)
	}
	if _, ok, err := stage.ClaimPart(2); ok || err != nil {
		t.Fatalf("second claim of part 2 while the first holds: %v, %v", ok, err)
	}
	host, _ := os.Hostname()
	if got, want := Claimant(stage.PartClaimPath(2)), fmt.Sprintf("%s %d", host, os.Getpid()); got != want {
		t.Errorf("the claim is held by %q, want %q", got, want)
	}
	if _, ok, err := stage.ClaimPart(1); !ok || err != nil {
		t.Fatalf("a claim of part 1 while part 2's holds: %v, %v", ok, err)
	}
	release()
	set.Clean()
	if names, _ := os.ReadDir(filepath.Dir(out)); len(names) != 0 {
		t.Errorf("Clean left %v", names)
	}
}
