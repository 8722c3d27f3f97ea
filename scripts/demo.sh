#!/usr/bin/env bash
# The demo behind `make demo`: noise the balloons crop that ships in
# testdata/ at σ = 30 (seed 1), denoise it with the default settings, print
# PSNR/SSIM/SAM/ERGAS before and after, and draw clean | noisy | denoised at
# 420 nm. Outputs go to demo-out/ (or $DEMO_OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${1:-bin/tdsc}
crop=testdata/balloons_crop128
out=${DEMO_OUT:-demo-out}
mkdir -p "$out"

"$tdsc" noise --input "$crop" --sigma 30 --seed 1 --out "$out/noisy30.hdr" --force --quiet
"$tdsc" denoise --input "$out/noisy30.hdr" --sigma 30 --out "$out/denoised30.hdr" --ref "$crop" --force
"$tdsc" compare --ref "$crop" --out "$out/compare420.png" "$out/noisy30.hdr" "$out/denoised30.hdr" --force
