#!/usr/bin/env bash
# The demo behind `make demo`: noise the balloons crop that ships in
# testdata/ at σ = 30 (seed 1), denoise the same noisy cube with the paper's
# 2dsc and with the default nonlocal method, print PSNR/SSIM/SAM/ERGAS of the
# input and each result, and draw clean | noisy | 2dsc | nonlocal at 420 nm.
# Outputs go to demo-out/ (or $DEMO_OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${1:-bin/tdsc}
crop=testdata/balloons_crop128
out=${DEMO_OUT:-demo-out}
mkdir -p "$out"

"$tdsc" noise --input "$crop" --sigma 30 --seed 1 --out "$out/noisy30.hdr" --force --quiet
"$tdsc" denoise --method 2dsc --input "$out/noisy30.hdr" --sigma 30 --out "$out/2dsc30.hdr" --force --quiet
"$tdsc" denoise --method nonlocal --input "$out/noisy30.hdr" --sigma 30 --out "$out/nonlocal30.hdr" --force --quiet
"$tdsc" eval --ref "$crop" "$out/noisy30.hdr" "$out/2dsc30.hdr" "$out/nonlocal30.hdr"
"$tdsc" compare --ref "$crop" --out "$out/compare420.png" "$out/noisy30.hdr" "$out/2dsc30.hdr" "$out/nonlocal30.hdr" --force
