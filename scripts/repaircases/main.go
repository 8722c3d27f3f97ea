// Command repaircases prints the tables of "Removing real noise" in
// docs/results.md: the PSNR (dB, tdsc eval's mean over bands) and, in
// brackets, the seconds of every chosen way of denoising QRNN3D's five
// complex-noise cases, for every NAME_c1.hdr … NAME_c5.hdr with
// NAME_clean.hdr in the folder --cases (as scripts/find-noise.sh writes
// them).
//
//	go run ./scripts/repaircases --cases WORK/cases [--variants repair,no-fill] [--scenes chart] [--case-list 2,5]
//
// The variants are today's two paths without the repair stage (default:
// the nonlocal method at the median σ; per-band: the bands whitened by
// their MAD σ), repair.Remove around the nonlocal method with its
// defaults (repair), and the ablation, each part of Remove switched off
// or changed alone (no-stripes, no-fill, no-reestimate, one-pass,
// three-passes, no-whiten, draft). The table goes to stdout, a line per
// run to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"tdsc/internal/formats"
	"tdsc/internal/methods/nonlocal"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
)

// A variant is one way of denoising a case.
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
	{"repair", removeWith(repair.Options{})},
	{"no-stripes", removeWith(repair.Options{KeepStripes: true})},
	{"no-fill", removeWith(repair.Options{KeepMasked: true})},
	{"no-reestimate", removeWith(repair.Options{NoReestimate: true})},
	{"one-pass", removeWith(repair.Options{Passes: 1})},
	{"three-passes", removeWith(repair.Options{Passes: 3})},
	{"no-whiten", removeWith(repair.Options{NoWhiten: true})},
	{"draft", removeWith(repair.Options{Draft: draftMethod()})},
}

// nonlocalMethod is the nonlocal method with its defaults.
func nonlocalMethod() repair.Method {
	return withoutResult(&nonlocal.Denoiser{})
}

// draftMethod is a cheaper nonlocal: one Wiener pass, one low-rank round.
func draftMethod() repair.Method {
	return withoutResult(&nonlocal.Denoiser{Options: nonlocal.Options{Wiener: 1, Rounds: 1}})
}

// withoutResult is d's Denoise without the settings it reports.
func withoutResult(d *nonlocal.Denoiser) repair.Method {
	return func(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
		out, _, err := d.Denoise(ctx, noisy, sigma)
		return out, err
	}
}

func removeWith(o repair.Options) func(ctx context.Context, noisy *msi.Cube) (*msi.Cube, error) {
	return func(ctx context.Context, noisy *msi.Cube) (*msi.Cube, error) {
		r, err := repair.Remove(ctx, noisy, sparsenoise.Detect(noisy), nonlocalMethod(), o)
		if err != nil {
			return nil, err
		}
		return r.Estimate, nil
	}
}

func main() {
	dir := flag.String("cases", "", "folder of NAME_clean.hdr and NAME_c1.hdr … NAME_c5.hdr")
	chosen := flag.String("variants", "repair", "comma-separated variants: "+names())
	scenes := flag.String("scenes", "", "comma-separated substrings of NAME: only those scenes")
	cases := flag.String("case-list", "", "comma-separated case numbers (1–5): only those cases")
	flag.Parse()
	if err := run(*dir, strings.Split(*chosen, ","), *scenes, *cases); err != nil {
		fmt.Fprintln(os.Stderr, "repaircases:", err)
		os.Exit(1)
	}
}

func names() string {
	var n []string
	for _, v := range variants {
		n = append(n, v.name)
	}
	return strings.Join(n, ", ")
}

func run(dir string, chosen []string, scenes, cases string) error {
	if dir == "" {
		return fmt.Errorf("want --cases")
	}
	var runs []variant
	for _, name := range chosen {
		i := slices.IndexFunc(variants, func(v variant) bool { return v.name == name })
		if i < 0 {
			return fmt.Errorf("--variants: no variant %q (there are %s)", name, names())
		}
		runs = append(runs, variants[i])
	}
	firsts, err := filepath.Glob(filepath.Join(dir, "*_c1.hdr"))
	if err != nil || len(firsts) == 0 {
		return fmt.Errorf("no *_c1.hdr in %s", dir)
	}
	ctx := context.Background()
	psnr := func(ref, x *msi.Cube) (float64, error) {
		r, err := metrics.Evaluate(ctx, ref, x)
		if err != nil {
			return 0, err
		}
		return r.PSNR, nil
	}
	fmt.Printf("| scene | case | noisy | %s |\n|---|---|---|%s\n", strings.Join(chosen, " | "), strings.Repeat("---|", len(chosen)))
	for _, first := range firsts {
		name := strings.TrimSuffix(filepath.Base(first), "_c1.hdr")
		if scenes != "" && !slices.ContainsFunc(strings.Split(scenes, ","), func(s string) bool { return strings.Contains(name, s) }) {
			continue
		}
		clean, err := formats.Open(filepath.Join(dir, name+"_clean.hdr"))
		if err != nil {
			return err
		}
		for k := noise.CaseNonIID; k <= noise.CaseMixture; k++ {
			if cases != "" && !slices.Contains(strings.Split(cases, ","), fmt.Sprint(int(k))) {
				continue
			}
			noisy, err := formats.Open(filepath.Join(dir, fmt.Sprintf("%s_c%d.hdr", name, k)))
			if err != nil {
				return err
			}
			p, err := psnr(clean, noisy)
			if err != nil {
				return err
			}
			row := fmt.Sprintf("| %s | c%d %s | %.2f |", name, k, k.Name(), p)
			for _, v := range runs {
				start := time.Now()
				x, err := v.run(ctx, noisy)
				if err != nil {
					return fmt.Errorf("%s c%d %s: %v", name, k, v.name, err)
				}
				took := time.Since(start).Seconds()
				if p, err = psnr(clean, x); err != nil {
					return err
				}
				row += fmt.Sprintf(" %.2f (%.0f) |", p, took)
				fmt.Fprintf(os.Stderr, "%s c%d %s: %.2f dB in %.1f s\n", name, k, v.name, p, took)
			}
			fmt.Println(row)
		}
	}
	return nil
}
