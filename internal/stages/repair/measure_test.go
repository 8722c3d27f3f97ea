package repair

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tdsc/internal/formats"
	"tdsc/internal/methods/nonlocal"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/testenv/cubetest"
)

// variants are the ways TestMeasure denoises a case: today's two paths
// without this package, Remove with the defaults, and the ablation (each
// part of Remove switched off or changed alone).
type variant struct {
	name string
	run  func(ctx context.Context, noisy *msi.Cube) (*msi.Cube, error)
}

var variants = []variant{
	{"default", func(ctx context.Context, noisy *msi.Cube) (*msi.Cube, error) {
		return nonlocalMethod()(ctx, noisy, noise.EstimateMedian(noisy))
	}},
	{"per-band", func(ctx context.Context, noisy *msi.Cube) (*msi.Cube, error) {
		sigmas, err := noise.EstimateBands(noisy, noise.MAD)
		if err != nil {
			return nil, err
		}
		return bandwhiten.Denoise(ctx, nonlocalMethod(), noisy, sigmas, bandwhiten.Options{})
	}},
	{"repair", removeWith(Options{})},
	{"no-stripes", removeWith(Options{KeepStripes: true})},
	{"no-fill", removeWith(Options{KeepMasked: true})},
	{"no-reestimate", removeWith(Options{NoReestimate: true})},
	{"one-pass", removeWith(Options{Passes: 1})},
	{"three-passes", removeWith(Options{Passes: 3})},
	{"no-whiten", removeWith(Options{NoWhiten: true})},
	{"draft", removeWith(Options{Draft: draftMethod()})},
}

// nonlocalMethod is the nonlocal method with its defaults.
func nonlocalMethod() Method {
	return withoutResult(&nonlocal.Denoiser{})
}

// draftMethod is a cheaper nonlocal: one Wiener pass, one low-rank round.
func draftMethod() Method {
	return withoutResult(&nonlocal.Denoiser{Options: nonlocal.Options{Wiener: 1, Rounds: 1}})
}

// withoutResult is d's Denoise without the settings it reports.
func withoutResult(d *nonlocal.Denoiser) Method {
	return func(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
		out, _, err := d.Denoise(ctx, noisy, sigma)
		return out, err
	}
}

func removeWith(o Options) func(ctx context.Context, noisy *msi.Cube) (*msi.Cube, error) {
	return func(ctx context.Context, noisy *msi.Cube) (*msi.Cube, error) {
		r, err := Remove(ctx, noisy, sparsenoise.Detect(noisy), nonlocalMethod(), o)
		if err != nil {
			return nil, err
		}
		return r.Estimate, nil
	}
}

// TestMeasure prints the table of docs/results.md ("Removing real noise"):
// the PSNR (dB) and time (s) of every variant on QRNN3D's five cases of
// every NAME_c1.hdr … NAME_c5.hdr with NAME_clean.hdr in the folder
// $TDSC_REPAIR_CASES (as scripts/find-noise.sh writes them); skipped
// without it. $TDSC_REPAIR_VARIANTS (comma-separated names of variants,
// default "repair"), $TDSC_REPAIR_SCENES (substrings of NAME) and
// $TDSC_REPAIR_CASE_LIST (case numbers, e.g. "2,5") narrow it down.
func TestMeasure(t *testing.T) {
	dir := os.Getenv("TDSC_REPAIR_CASES")
	if dir == "" {
		t.Skip("TDSC_REPAIR_CASES not set")
	}
	chosen := strings.Split(envOr("TDSC_REPAIR_VARIANTS", "repair"), ",")
	for _, v := range chosen {
		if !slices.ContainsFunc(variants, func(w variant) bool {
			return w.name == v
		}) {
			t.Fatalf("TDSC_REPAIR_VARIANTS: no variant %q", v)
		}
	}
	firsts, err := filepath.Glob(filepath.Join(dir, "*_c1.hdr"))
	if err != nil || len(firsts) == 0 {
		t.Fatalf("no *_c1.hdr in %s", dir)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "| scene | case | noisy | %s |\n|---|---|---|%s\n", strings.Join(chosen, " | "), strings.Repeat("---|", len(chosen)))
	for _, first := range firsts {
		name := strings.TrimSuffix(filepath.Base(first), "_c1.hdr")
		if scenes := os.Getenv("TDSC_REPAIR_SCENES"); scenes != "" && !slices.ContainsFunc(strings.Split(scenes, ","), func(s string) bool { return strings.Contains(name, s) }) {
			continue
		}
		clean, err := formats.Open(filepath.Join(dir, name+"_clean.hdr"))
		if err != nil {
			t.Fatal(err)
		}
		for k := noise.CaseNonIID; k <= noise.CaseMixture; k++ {
			if list := os.Getenv("TDSC_REPAIR_CASE_LIST"); list != "" && !slices.Contains(strings.Split(list, ","), fmt.Sprint(int(k))) {
				continue
			}
			noisy, err := formats.Open(filepath.Join(dir, fmt.Sprintf("%s_c%d.hdr", name, k)))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, "| %s | c%d %s | %.2f |", name, k, k.Name(), cubetest.PSNR(t, clean, noisy))
			for _, v := range chosen {
				i := slices.IndexFunc(variants, func(w variant) bool {
					return w.name == v
				})
				start := time.Now()
				x, err := variants[i].run(context.Background(), noisy)
				if err != nil {
					t.Fatalf("%s c%d %s: %v", name, k, v, err)
				}
				fmt.Fprintf(&out, " %.2f (%.0f) |", cubetest.PSNR(t, clean, x), time.Since(start).Seconds())
				t.Logf("%s c%d %s: %.2f dB in %.1f s", name, k, v, cubetest.PSNR(t, clean, x), time.Since(start).Seconds())
			}
			out.WriteString("\n")
		}
	}
	t.Log("\n" + out.String())
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// TestTime times Detect and Remove around the nonlocal method (each pass
// and the spectral rank it chose logged) on the cube $TDSC_REPAIR_CUBE,
// with its PSNR against $TDSC_REPAIR_REF when that is set; skipped without
// the cube. $TDSC_REPAIR_DRAFT=1 uses the draft method for the first pass.
func TestTime(t *testing.T) {
	path := os.Getenv("TDSC_REPAIR_CUBE")
	if path == "" {
		t.Skip("TDSC_REPAIR_CUBE not set")
	}
	noisy, err := formats.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	det := sparsenoise.Detect(noisy)
	t.Logf("Detect: %.1f s\n%s", time.Since(start).Seconds(), det.Summary())
	timed := func(name string, d *nonlocal.Denoiser) Method {
		return func(ctx context.Context, c *msi.Cube, sigma float64) (*msi.Cube, error) {
			passStart := time.Now()
			x, res, err := d.Denoise(ctx, c, sigma)
			t.Logf("%s pass at σ %.1f: %v, %.1f s", name, sigma, res.Settings, time.Since(passStart).Seconds())
			return x, err
		}
	}
	var o Options
	if os.Getenv("TDSC_REPAIR_DRAFT") == "1" {
		o.Draft = timed("draft", &nonlocal.Denoiser{Options: nonlocal.Options{Wiener: 1, Rounds: 1}})
	}
	r, err := Remove(context.Background(), noisy, det, timed("nonlocal", &nonlocal.Denoiser{}), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Detect and Remove: %.1f s", time.Since(start).Seconds())
	if ref := os.Getenv("TDSC_REPAIR_REF"); ref != "" {
		clean, err := formats.Open(ref)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("PSNR %.2f dB", cubetest.PSNR(t, clean, r.Estimate))
	}
}
