package sparsenoise

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// sortedStuckValues is stuckValues as it was first written, the
// reference of TestStuckValuesAgainstSort: the band's unmasked values
// sorted, the runs of equal values counted, a run's neighbours the runs
// before and after it, and each frequency from two binary searches.
func sortedStuckValues(band []float64, mask []uint8) (stuck, frequency []float64) {
	values := make([]float64, 0, len(band))
	for i, v := range band {
		if mask[i] == 0 {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return nil, nil
	}
	slices.Sort(values)
	var runs []int
	var runValues []float64
	for i := 0; i < len(values); {
		j := i + 1
		for j < len(values) && values[j] == values[i] {
			j++
		}
		runs = append(runs, j-i)
		runValues = append(runValues, values[i])
		i = j
	}
	least := max(float64(stuckMinCount), stuckMinShare*float64(len(values)))
	for i, n := range runs {
		if float64(n) >= least && float64(n) >= stuckRatio*float64(adjacentRun(runs, i)) {
			v := runValues[i]
			stuck = append(stuck, v)
			lo, _ := slices.BinarySearch(values, v-flatTol)
			hi, _ := slices.BinarySearch(values, math.Nextafter(v+flatTol, math.Inf(1)))
			frequency = append(frequency, float64(hi-lo)/float64(len(values)))
		}
	}
	return stuck, frequency
}

// adjacentRun is the larger of the counts of the values next to the i-th
// distinct value (runs lists the counts of a band's distinct values in
// increasing order of value); 0 for a value without neighbours.
func adjacentRun(runs []int, i int) int {
	n := 0
	if i > 0 {
		n = runs[i-1]
	}
	if i+1 < len(runs) {
		n = max(n, runs[i+1])
	}
	return n
}

// stuckBand returns a random band of height×width pixels and its mask,
// made to reach the edge cases of stuckValues: continuous noise, integer
// counts (every value repeated, neighbours of similar counts), a few
// levels with counts at the thresholds (least, 20 times a neighbour),
// flat patches, several stuck values at various densities, values at and
// just past ±flatTol of a stuck value, −0 beside +0, NaN and ±∞, and masks
// of every kind.
func stuckBand(rng *rand.Rand, height, width int) (band []float64, mask []uint8) {
	n := height * width
	band, mask = make([]float64, n), make([]uint8, n)
	switch rng.IntN(5) {
	case 0: // continuous
		for i := range band {
			band[i] = 255 * rng.Float64()
		}
	case 1: // integer counts around a mode
		mode, spread := float64(rng.IntN(256)), 0.3+20*rng.Float64()
		for i := range band {
			band[i] = math.Round(mode + spread*rng.NormFloat64())
		}
	case 2: // a few levels, adjacent in order, with counts near the thresholds
		levels := 2 + rng.IntN(5)
		first := float64(rng.IntN(250))
		i := 0
		for l := range levels {
			count := []int{1, 7, 8, 9, 20, 21, 160, 161, 1 + rng.IntN(n)}[rng.IntN(9)]
			for ; count > 0 && i < n; count-- {
				band[i] = first + float64(l)*[]float64{1, flatTol, 0.25}[l%3]
				i++
			}
		}
		for ; i < n; i++ {
			band[i] = first + 10 + 200*rng.Float64()
		}
		rng.Shuffle(n, func(a, b int) { band[a], band[b] = band[b], band[a] })
	case 3: // one value, the smallest having no neighbour but a NaN's
		v := float64(rng.IntN(256))
		for i := range band {
			band[i] = v
		}
	default: // continuous with flat patches
		for i := range band {
			band[i] = 100 + 50*rng.NormFloat64()
		}
		for range rng.IntN(4) {
			v := float64(rng.IntN(256))
			y0, x0 := rng.IntN(height), rng.IntN(width)
			for y := y0; y < min(height, y0+1+rng.IntN(20)); y++ {
				for x := x0; x < min(width, x0+1+rng.IntN(20)); x++ {
					band[y*width+x] = v + 0.2*rng.Float64()*float64(rng.IntN(2))
				}
			}
		}
	}
	var stuck []float64
	for range rng.IntN(5) {
		v := []float64{0, math.Copysign(0, -1), 255, float64(rng.IntN(256)), 255 * rng.Float64()}[rng.IntN(5)]
		stuck = append(stuck, v)
		density := []float64{0.001, 0.005, 0.02, 0.1, 0.3, 0.5}[rng.IntN(6)]
		for i := range band {
			if rng.Float64() < density {
				band[i] = v
			}
		}
	}
	for i := range band {
		if rng.Float64() >= 0.05 {
			continue
		}
		if len(stuck) > 0 && rng.IntN(3) > 0 {
			v := stuck[rng.IntN(len(stuck))]
			near := []float64{v - flatTol, v + flatTol, math.Nextafter(v-flatTol, math.Inf(-1)),
				math.Nextafter(v+flatTol, math.Inf(1)), v + 1, v - 1, -v, math.Nextafter(v, 0)}
			band[i] = near[rng.IntN(len(near))]
			continue
		}
		band[i] = []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(5)]
	}
	if rng.IntN(4) == 0 {
		band[rng.IntN(n)] = math.NaN()
	}
	switch rng.IntN(4) {
	case 0: // nothing masked
	case 1: // everything masked
		for i := range mask {
			mask[i] = Dead
		}
	default:
		density := rng.Float64() / 2
		for i := range mask {
			if rng.Float64() < density {
				mask[i] = []uint8{Impulse, Dead, Missing, Dead | Impulse}[rng.IntN(4)]
			}
		}
	}
	return band, mask
}

// TestStuckValuesAgainstSort: on random bands reaching every edge case,
// stuckValues finds the same stuck values with the same frequencies as
// sorting the band does, and detectStuck marks the same pixels as it did
// with those and maps by value.
func TestStuckValuesAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 492))
	trials := 3000
	if testing.Short() {
		trials = 600
	}
	found := 0
	for trial := range trials {
		height, width := 1+rng.IntN(40), 1+rng.IntN(40)
		switch trial % 10 {
		case 0:
			height, width = 90+rng.IntN(40), 90+rng.IntN(40) // least above 8
		case 1:
			height, width = 1+rng.IntN(5), 1+rng.IntN(5) // counts about least
		}
		band, mask := stuckBand(rng, height, width)
		wantStuck, wantFrequency := sortedStuckValues(band, mask)
		stuck, frequency := stuckValues(band, mask)
		if !slices.Equal(stuck, wantStuck) || !slices.Equal(frequency, wantFrequency) {
			t.Fatalf("trial %d (%d×%d): stuck values %v, frequencies %v; sorting gives %v, %v",
				trial, height, width, stuck, frequency, wantStuck, wantFrequency)
		}
		found += len(stuck)
		wantMask := slices.Clone(mask)
		want := sortedDetectStuck(band, wantMask, height, width)
		if got := detectStuck(band, mask, height, width); got != want || !slices.Equal(mask, wantMask) {
			t.Fatalf("trial %d (%d×%d): %d pixels marked, sorting marks %d (masks equal: %t)",
				trial, height, width, got, want, slices.Equal(mask, wantMask))
		}
	}
	if found < trials/4 {
		t.Fatalf("only %d stuck values in %d bands: the bands reach too few cases", found, trials)
	}
}

// sortedDetectStuck is detectStuck as it was first written: the stuck
// values those of sortedStuckValues, the shares of their pixels'
// neighbours summed in maps by value.
func sortedDetectStuck(band []float64, mask []uint8, height, width int) int {
	stuck, frequencies := sortedStuckValues(band, mask)
	if len(stuck) == 0 {
		return 0
	}
	frequency := map[float64]float64{}
	for j, v := range stuck {
		frequency[v] = frequencies[j]
	}
	shares := make([]float64, len(band))
	sumShare := map[float64]float64{}
	count := map[float64]int{}
	for y := range height {
		for x := range width {
			i := y*width + x
			if mask[i] != 0 || !slices.Contains(stuck, band[i]) {
				continue
			}
			same, total := 0, 0
			for yy := max(0, y-2); yy <= min(height-1, y+2); yy++ {
				for xx := max(0, x-2); xx <= min(width-1, x+2); xx++ {
					if j := yy*width + xx; j != i && mask[j]&(Dead|Missing) == 0 {
						total++
						if math.Abs(band[j]-band[i]) <= flatTol {
							same++
						}
					}
				}
			}
			shares[i] = float64(same) / float64(max(total, 1))
			sumShare[band[i]] += shares[i]
			count[band[i]]++
		}
	}
	marked := 0
	for i, v := range band {
		if mask[i] != 0 || count[v] == 0 {
			continue
		}
		scattered := sumShare[v]/float64(count[v]) < frequency[v]+scatterMargin
		if scattered || shares[i] < stuckFlatShare {
			mask[i] |= Impulse
			marked++
		}
	}
	return marked
}

// benchmarkStuck times detect on a 256×256 band of Gaussian noise (σ =
// 10) about a smooth scene, with salt and pepper (0 and 255) of the given
// density; metric stuck-ms/op is the time of finding the stuck values
// alone (find).
func benchmarkStuck(b *testing.B, density float64, detect func([]float64, []uint8, int, int) int, find func([]float64, []uint8) ([]float64, []float64)) {
	const size = 256
	rng := rand.New(rand.NewPCG(1, 2))
	band, mask := make([]float64, size*size), make([]uint8, size*size)
	for i := range band {
		band[i] = 120 + 40*math.Sin(float64(i%size)/30) + 10*rng.NormFloat64()
		if rng.Float64() < density {
			band[i] = float64(255 * rng.IntN(2))
		}
	}
	for b.Loop() {
		clear(mask)
		detect(band, mask, size, size)
	}
	clear(mask)
	start := time.Now()
	const finds = 20
	for range finds {
		find(band, mask)
	}
	b.ReportMetric(time.Since(start).Seconds()*1000/finds, "stuck-ms/op")
}

func BenchmarkDetectStuckSaltPepper(b *testing.B) {
	benchmarkStuck(b, 0.3, detectStuck, stuckValues)
}
func BenchmarkDetectStuckSortSaltPepper(b *testing.B) {
	benchmarkStuck(b, 0.3, sortedDetectStuck, sortedStuckValues)
}
func BenchmarkDetectStuckNoise(b *testing.B) { benchmarkStuck(b, 0, detectStuck, stuckValues) }
func BenchmarkDetectStuckSortNoise(b *testing.B) {
	benchmarkStuck(b, 0, sortedDetectStuck, sortedStuckValues)
}
