// Command repairtime times the real-noise repair path on one cube, as
// "Removing real noise" in docs/results.md reports it: sparsenoise.Detect,
// then repair.Remove around the nonlocal method with its defaults, each
// pass with the σ it was given, the settings it chose (the spectral rank
// among them) and its seconds, and the PSNR against --ref when given
// (tdsc eval's mean over bands). Everything goes to stdout.
//
//	go run ./scripts/repairtime --cube c5.hdr [--ref CLEAN] [--draft] [--cpuprofile cpu.prof]
//
// --draft makes the first pass a draft nonlocal (one Wiener pass, one
// low-rank round); --cpuprofile writes a CPU profile of the run for
// `go tool pprof`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"tdsc/internal/formats"
	"tdsc/internal/methods/nonlocal"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
)

func main() {
	cube := flag.String("cube", "", "the noisy cube")
	ref := flag.String("ref", "", "the clean cube, for the PSNR")
	draft := flag.Bool("draft", false, "a draft nonlocal (one Wiener pass, one low-rank round) for the first pass")
	profile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if err := run(*cube, *ref, *draft, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "repairtime:", err)
		os.Exit(1)
	}
}

func run(path, ref string, draft bool, profile string) error {
	if path == "" {
		return fmt.Errorf("want --cube")
	}
	noisy, err := formats.Open(path)
	if err != nil {
		return err
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	det := sparsenoise.Detect(noisy)
	fmt.Printf("Detect: %.1f s\n%s\n", time.Since(start).Seconds(), det.Summary())
	timed := func(name string, d *nonlocal.Denoiser) repair.Method {
		return func(ctx context.Context, c *msi.Cube, sigma float64) (*msi.Cube, error) {
			passStart := time.Now()
			x, res, err := d.Denoise(ctx, c, sigma)
			if err != nil {
				return nil, err
			}
			fmt.Printf("%s pass at σ %.1f: %v, %.1f s\n", name, sigma, res.Settings, time.Since(passStart).Seconds())
			return x, nil
		}
	}
	var o repair.Options
	if draft {
		o.Draft = timed("draft", &nonlocal.Denoiser{Options: nonlocal.Options{Wiener: 1, Rounds: 1}})
	}
	r, err := repair.Remove(context.Background(), noisy, det, timed("nonlocal", &nonlocal.Denoiser{}), o)
	if err != nil {
		return err
	}
	fmt.Printf("Detect and Remove: %.1f s\n", time.Since(start).Seconds())
	if ref != "" {
		clean, err := formats.Open(ref)
		if err != nil {
			return err
		}
		e, err := metrics.Evaluate(context.Background(), clean, r.Estimate)
		if err != nil {
			return err
		}
		fmt.Printf("PSNR %.2f dB\n", e.PSNR)
	}
	return nil
}
