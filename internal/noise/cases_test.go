package noise

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/testenv/cubetest"
)

func mustCase(t *testing.T, src *msi.Cube, c Case, seed uint64) (*msi.Cube, *Applied) {
	t.Helper()
	out, applied, err := SimulateCase(nil, src, c, seed)
	if err != nil {
		t.Fatal(err)
	}
	return out, applied
}

// caseBandKinds checks ck against c1 of the same seed band by band and
// returns what every band's difference is: "" (none), "stripe" (whole
// columns offset by one value each, within ±63.75), "dead" (whole columns
// set to 0) or "impulse" (pixels set to 0 or 255), with the number of
// columns or pixels.
func caseBandKinds(t *testing.T, c1, ck *msi.Cube) (kinds []string, counts []int) {
	t.Helper()
	kinds, counts = make([]string, ck.Bands), make([]int, ck.Bands)
	for b := range ck.Bands {
		base, got := c1.Band(b), ck.Band(b)
		columns, deadColumns, pixels := 0, 0, 0
		for x := range ck.Width {
			offset := got[x] - base[x]
			dead, same := true, true
			for y := range ck.Height {
				i := y*ck.Width + x
				if got[i] != 0 {
					dead = false
				}
				if math.Abs(got[i]-base[i]-offset) > 1e-9 {
					same = false
				}
			}
			if same && offset != 0 {
				columns++
				if math.Abs(offset) > caseStripeAmplitude {
					t.Errorf("band %d column %d: offset %g beyond ±63.75", b, x, offset)
				}
			}
			if dead {
				deadColumns++
			}
		}
		for i := range got {
			if got[i] != base[i] {
				pixels++
				if got[i] != 0 && got[i] != 255 && columns == 0 {
					t.Fatalf("band %d pixel %d: %g is neither c1's %g nor 0 or 255", b, i, got[i], base[i])
				}
			}
		}
		switch {
		case pixels == 0:
		case deadColumns > 0 && pixels <= deadColumns*ck.Height:
			kinds[b], counts[b] = "dead", deadColumns
		case columns > 0 && pixels == columns*ck.Height:
			kinds[b], counts[b] = "stripe", columns
		default:
			kinds[b], counts[b] = "impulse", pixels
		}
	}
	return kinds, counts
}

// TestSimulateCaseParts checks every case against the definitions: the
// Gaussian part is case 1's of the same seed, and the sparse part is on the
// right number of bands, with column counts in ceil(0.05·W) … ceil(0.15·W)
// and the reported counts and densities.
func TestSimulateCaseParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const h, w, bands = 30, 47, 31
	src := cubetest.Uniform(rng, h, w, bands, 0, 255)
	lo, hi := int(math.Ceil(0.05*w)), int(math.Ceil(0.15*w))
	for seed := uint64(1); seed <= 3; seed++ {
		c1, a1 := mustCase(t, src, CaseNonIID, seed)
		for b, s := range a1.Sigmas {
			if !slices.Contains(caseSigmas, s) {
				t.Fatalf("band %d: σ %g not in {10, 30, 50, 70}", b, s)
			}
		}
		for c := CaseStripe; c <= CaseMixture; c++ {
			ck, ak := mustCase(t, src, c, seed)
			if !slices.Equal(ak.Sigmas, a1.Sigmas) {
				t.Fatalf("case %d seed %d: σs %v, case 1 %v", c, seed, ak.Sigmas, a1.Sigmas)
			}
			kinds, counts := caseBandKinds(t, c1, ck)
			want := map[string][]int{"stripe": ak.StripeBands, "dead": ak.DeadColumnBands, "impulse": ak.ImpulseBands}
			got := map[string][]int{}
			for b, k := range kinds {
				if k != "" {
					got[k] = append(got[k], b)
				}
			}
			per := 10
			if c == CaseMixture {
				per = bands / 3
			}
			for kind, wantBands := range want {
				sorted := slices.Sorted(slices.Values(wantBands))
				if !slices.Equal(got[kind], sorted) {
					t.Errorf("case %d seed %d: %s in bands %v, reported %v", c, seed, kind, got[kind], sorted)
				}
				if n := len(wantBands); n != 0 && n != per {
					t.Errorf("case %d seed %d: %s on %d bands, want %d", c, seed, kind, n, per)
				}
			}
			if c == CaseMixture && (len(ak.StripeBands) == 0 || len(ak.DeadColumnBands) == 0 || len(ak.ImpulseBands) == 0) {
				t.Errorf("mixture seed %d: a part is missing: %+v", seed, ak)
			}
			for i, b := range ak.StripeBands {
				if counts[b] != ak.StripeColumns[i] || counts[b] < lo || counts[b] > hi {
					t.Errorf("case %d band %d: %d striped columns, reported %d, want %d…%d", c, b, counts[b], ak.StripeColumns[i], lo, hi)
				}
			}
			for i, b := range ak.DeadColumnBands {
				if counts[b] != ak.DeadColumns[i] || counts[b] < lo || counts[b] > hi {
					t.Errorf("case %d band %d: %d dead columns, reported %d, want %d…%d", c, b, counts[b], ak.DeadColumns[i], lo, hi)
				}
			}
			for i, b := range ak.ImpulseBands {
				d := ak.ImpulseDensities[i]
				if !slices.Contains(caseDensities, d) {
					t.Errorf("case %d band %d: density %g not in {0.1, 0.3, 0.5, 0.7}", c, b, d)
				}
				// A replaced pixel that c1 already had at 0 or 255 does not
				// show; c1 never has (its values are continuous).
				if counts[b] != ak.ImpulsePixels[i] {
					t.Errorf("case %d band %d: %d pixels changed, reported %d", c, b, counts[b], ak.ImpulsePixels[i])
				}
				n := float64(h * w)
				if sd := math.Sqrt(n * d * (1 - d)); math.Abs(float64(counts[b])-n*d) > 5*sd {
					t.Errorf("case %d band %d: %d impulses of %g pixels at density %g", c, b, counts[b], n, d)
				}
			}
		}
	}
}

// TestSimulateCaseStatistics pools many seeds and checks the drawn
// distributions: the four σs and four densities about equally often, the
// column counts over the whole inclusive range, stripe offsets uniform in
// ±63.75 (mean 0, variance 63.75²/3), and salt as often as pepper.
func TestSimulateCaseStatistics(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	const h, w, bands = 20, 40, 31
	src := cubetest.Uniform(rng, h, w, bands, 0, 255)
	lo, hi := int(math.Ceil(0.05*w)), int(math.Ceil(0.15*w))
	sigmaCount := map[float64]int{}
	densityCount := map[float64]int{}
	columnCount := map[int]int{}
	var offsets []float64
	salt, pepper := 0, 0
	const seeds = 60
	for seed := uint64(100); seed < 100+seeds; seed++ {
		c1, a1 := mustCase(t, src, CaseNonIID, seed)
		for _, s := range a1.Sigmas {
			sigmaCount[s]++
		}
		c5, a5 := mustCase(t, src, CaseMixture, seed)
		for _, k := range a5.StripeColumns {
			columnCount[k]++
		}
		for _, k := range a5.DeadColumns {
			columnCount[k]++
		}
		for _, d := range a5.ImpulseDensities {
			densityCount[d]++
		}
		for _, b := range a5.StripeBands {
			for x := range w {
				if d := c5.At(0, x, b) - c1.At(0, x, b); d != 0 {
					offsets = append(offsets, d)
				}
			}
		}
		for _, b := range a5.ImpulseBands {
			for i, v := range c5.Band(b) {
				if v != c1.Band(b)[i] {
					if v == 255 {
						salt++
					} else {
						pepper++
					}
				}
			}
		}
	}
	checkUniform := func(what string, counts map[float64]int, values []float64, total int) {
		p := 1 / float64(len(values))
		sd := math.Sqrt(float64(total) * p * (1 - p))
		for _, v := range values {
			if math.Abs(float64(counts[v])-float64(total)*p) > 5*sd {
				t.Errorf("%s %g drawn %d times of %d", what, v, counts[v], total)
			}
		}
	}
	checkUniform("σ", sigmaCount, caseSigmas, seeds*bands)
	checkUniform("density", densityCount, caseDensities, seeds*(bands/3))
	for k := lo; k <= hi; k++ {
		if columnCount[k] == 0 {
			t.Errorf("no band drew %d columns (range %d…%d): %v", k, lo, hi, columnCount)
		}
	}
	for k := range columnCount {
		if k < lo || k > hi {
			t.Errorf("%d columns drawn, outside %d…%d", k, lo, hi)
		}
	}
	var sum, sumSq float64
	for _, u := range offsets {
		sum += u
		sumSq += u * u
	}
	n := float64(len(offsets))
	variance := caseStripeAmplitude * caseStripeAmplitude / 3
	if mean := sum / n; math.Abs(mean) > 5*math.Sqrt(variance/n) {
		t.Errorf("stripe offsets: mean %g over %g", mean, n)
	}
	// The variance of u² for u uniform in ±a is 4a⁴/45.
	if v := sumSq / n; math.Abs(v-variance) > 5*math.Sqrt(4*math.Pow(caseStripeAmplitude, 4)/45/n) {
		t.Errorf("stripe offsets: mean square %g, want %g", v, variance)
	}
	if total := float64(salt + pepper); math.Abs(float64(salt)-total/2) > 5*math.Sqrt(total)/2 {
		t.Errorf("%d salt and %d pepper", salt, pepper)
	}
}

func TestSimulateCaseIsReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	src := cubetest.Uniform(rng, 16, 18, 12, 0, 255)
	for c := CaseNonIID; c <= CaseMixture; c++ {
		a, appliedA := mustCase(t, src, c, 7)
		b, _ := mustCase(t, src, c, 7)
		inPlace := src.Clone()
		if got, _, _ := SimulateCase(inPlace, inPlace, c, 7); got != inPlace {
			t.Fatal("SimulateCase did not return dst")
		}
		if !slices.Equal(a.Data, b.Data) || !slices.Equal(a.Data, inPlace.Data) {
			t.Fatalf("case %d: two cubes from seed 7 differ", c)
		}
		other, appliedO := mustCase(t, src, c, 8)
		same := 0
		for i := range a.Data {
			if a.Data[i] == other.Data[i] {
				same++
			}
		}
		if same > len(a.Data)/5 || slices.Equal(appliedA.Sigmas, appliedO.Sigmas) {
			t.Errorf("case %d: seeds 7 and 8 agree on %d of %d voxels, σs %v and %v", c, same, len(a.Data), appliedA.Sigmas, appliedO.Sigmas)
		}
	}
}

// TestSimulateCaseFewBands: below 10 bands every band gets the single
// part; the mixture takes floor(B/3) bands per part and refuses B < 3.
func TestSimulateCaseFewBands(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	src := cubetest.Uniform(rng, 12, 20, 5, 0, 255)
	_, a := mustCase(t, src, CaseStripe, 1)
	if len(a.StripeBands) != 5 {
		t.Errorf("5 bands: stripes on %v, want all", a.StripeBands)
	}
	_, a = mustCase(t, src, CaseMixture, 1)
	if len(a.StripeBands) != 1 || len(a.DeadColumnBands) != 1 || len(a.ImpulseBands) != 1 {
		t.Errorf("5 bands: mixture %v %v %v, want one band each", a.StripeBands, a.DeadColumnBands, a.ImpulseBands)
	}
	_, _, err := SimulateCase(nil, cubetest.Uniform(rng, 8, 8, 2, 0, 255), CaseMixture, 1)
	var oe *option.Error
	if !errors.As(err, &oe) || oe.Field != "case" {
		t.Errorf("2-band mixture: error %v, want an option error for case", err)
	}
	if _, _, err := SimulateCase(nil, src, 6, 1); !errors.As(err, &oe) {
		t.Errorf("case 6: error %v", err)
	}
}

func TestParseCase(t *testing.T) {
	for s, want := range map[string]Case{"1": CaseNonIID, "2": CaseStripe, "deadline": CaseDeadline, " Impulse ": CaseImpulse, "5": CaseMixture, "mixture": CaseMixture, "noniid": CaseNonIID} {
		if got, err := ParseCase("case", s); err != nil || got != want {
			t.Errorf("ParseCase(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"0", "6", "", "stripes", "1.0"} {
		var oe *option.Error
		if _, err := ParseCase("case", s); !errors.As(err, &oe) || oe.Field != "case" {
			t.Errorf("ParseCase(%q): error %v, want an option error for case", s, err)
		}
	}
	if got := CaseStripe.String(); got != "QRNN3D complex noise case 2 (stripe): σ per band from 10, 30, 50, 70; stripes on 10 bands" {
		t.Errorf("CaseStripe.String() = %q", got)
	}
}

// TestSimulateDead checks the dead columns and lines of Simulate: the
// reported bands have that many whole columns (lines) at 0, within
// ceil(Lo·n) … ceil(Hi·n), nothing else changes, and the other parts are
// as without them.
func TestSimulateDead(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	const h, w, bands = 24, 36, 10
	src := cubetest.Uniform(rng, h, w, bands, 0, 255)
	base := Spec{SigmaRange: Range{10, 30}, StripeBands: 0.2, Seed: 5}
	plain, _ := mustSimulate(t, src, base)
	spec := base
	spec.DeadColumnBands, spec.DeadLineBands = 0.3, 0.2
	out, applied := mustSimulate(t, src, spec)
	if len(applied.DeadColumnBands) != 3 || len(applied.DeadLineBands) != 2 {
		t.Fatalf("dead columns in %v, lines in %v; want 3 and 2 bands", applied.DeadColumnBands, applied.DeadLineBands)
	}
	deadCols, deadRows := map[int]int{}, map[int]int{}
	for i, b := range applied.DeadColumnBands {
		deadCols[b] = applied.DeadColumns[i]
	}
	for i, b := range applied.DeadLineBands {
		deadRows[b] = applied.DeadLines[i]
	}
	for b := range bands {
		cols, rows := 0, 0
		for x := range w {
			dead := true
			for y := range h {
				dead = dead && out.At(y, x, b) == 0
			}
			if dead {
				cols++
			}
		}
		for y := range h {
			dead := true
			for x := range w {
				dead = dead && out.At(y, x, b) == 0
			}
			if dead {
				rows++
			}
		}
		changed := 0
		for i, v := range out.Band(b) {
			if v != plain.Band(b)[i] {
				changed++
				if v != 0 {
					t.Fatalf("band %d pixel %d: %g changed to other than 0", b, i, v)
				}
			}
		}
		if cols != deadCols[b] || rows != deadRows[b] {
			t.Errorf("band %d: %d dead columns and %d dead lines, reported %d and %d", b, cols, rows, deadCols[b], deadRows[b])
		}
		if want := cols*h + rows*w - cols*rows; changed != want {
			t.Errorf("band %d: %d pixels changed, want %d", b, changed, want)
		}
	}
	for _, k := range applied.DeadColumns {
		if k < int(math.Ceil(0.05*w)) || k > int(math.Ceil(0.15*w)) {
			t.Errorf("%d dead columns of %d", k, w)
		}
	}
	for _, k := range applied.DeadLines {
		if k < int(math.Ceil(0.05*h)) || k > int(math.Ceil(0.15*h)) {
			t.Errorf("%d dead lines of %d", k, h)
		}
	}
	if got := spec.String(); got != "Gaussian noise σ uniform in 10:30 per band, seed 5; stripes on 0.2 of the bands (0.1:0.2 of the columns, amplitude 63.75); "+
		"dead columns on 0.3 of the bands (0.05:0.15 of the columns); dead lines on 0.2 of the bands (0.05:0.15 of the lines)" {
		t.Errorf("String() = %q", got)
	}
	for _, tc := range []struct {
		spec  Spec
		field string
	}{
		{Spec{DeadColumnBands: 2}, "dead-columns"},
		{Spec{DeadLineBands: -1}, "dead-lines"},
		{Spec{DeadLineBands: 0.5, DeadFraction: Range{0.2, 1.5}}, "dead-fraction"},
	} {
		var oe *option.Error
		if _, _, err := Simulate(nil, src, tc.spec); !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: error %v, want an option error for %q", tc.spec, err, tc.field)
		}
	}
}

func TestAppliedLines(t *testing.T) {
	a := &Applied{
		Sigmas:      []float64{10, 30, 10},
		StripeBands: []int{2, 0}, StripeColumns: []int{12, 9},
		ImpulseBands: []int{1}, ImpulseDensities: []float64{0.3}, ImpulsePixels: []int{301},
		DeadColumnBands: []int{0}, DeadColumns: []int{4},
		DeadLineBands: []int{2}, DeadLines: []int{3},
	}
	want := []string{
		"σ per band: 10.00 30.00 10.00",
		"stripes in bands 3 (12 columns), 1 (9 columns)",
		"impulses in bands 2 (density 0.3, 301 pixels)",
		"dead columns in bands 1 (4 columns)",
		"dead lines in bands 3 (3 lines)",
	}
	if got := a.Lines(); !slices.Equal(got, want) {
		t.Errorf("Lines() =\n%q\nwant\n%q", got, want)
	}
	if got := (&Applied{Sigmas: []float64{30, 30}}).Lines(); len(got) != 0 {
		t.Errorf("one σ, nothing else: Lines() = %q", got)
	}
}
