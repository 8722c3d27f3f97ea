#!/usr/bin/env bash
# Cost and quality of the default method against the band count on the same
# pixels: a scene's centre crop resampled to every band count (scripts/pgcubes,
# linear interpolation over the same wavelengths), Gaussian noise of σ
# (seed 1), `tdsc denoise` with no flags (the default path: noise search,
# σ estimated) under GNU time, then eval against the resampled clean cube.
# One row per band count, run one after the other (compare rows of one run:
# timings of a loaded machine are only meaningful as ratios).
#
#   scripts/bandcost.sh [SCENE [CROP [SIGMA [BANDS...]]]]
#
# Defaults: balloons, 256, 30, 31 62 124 224 425 (0 keeps the scene's
# bands). The binary is $TDSC (default bin/tdsc, built by `make build`);
# extra denoise flags go in $DENOISE_FLAGS. Prints a Markdown table: wall
# seconds, µs per voxel and per pixel, peak RSS, the time and peak against
# the first row, the PSNR of the noisy cube and of the result, and the
# chain's eigen-images (- for the bands).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
scene=${1:-${TDSC_DATA:-../shared/data}/cave/balloons_ms}
crop=${2:-256}
sigma=${3:-30}
shift $(($# < 3 ? $# : 3))
bands=("$@")
[ ${#bands[@]} -gt 0 ] || bands=(31 62 124 224 425)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "| bands | s | µs/voxel | µs/pixel | peak MiB | time × | PSNR noisy | PSNR | eigen-images |"
echo "|---|---|---|---|---|---|---|---|---|"
first_s=
for b in "${bands[@]}"; do
	go run ./scripts/pgcubes --input "$scene" --crop "$crop" --bands "$b" --out "$work/clean.hdr" --force
	"$tdsc" noise -q --input "$work/clean.hdr" --sigma "$sigma" --seed 1 --out "$work/noisy.hdr" --force
	# shellcheck disable=SC2086 # DENOISE_FLAGS is a list of flags
	/usr/bin/time -f '%e %M' -o "$work/time" "$tdsc" denoise -q --input "$work/noisy.hdr" --out "$work/out.hdr" --force ${DENOISE_FLAGS:-}
	read -r secs kib <"$work/time"
	read -r h w nb < <(awk -F'=' '/^ *lines/{l=$2} /^ *samples/{s=$2} /^ *bands/{b=$2} END{print l+0, s+0, b+0}' "$work/noisy.hdr")
	psnr() { "$tdsc" eval -q --csv --ref "$work/clean.hdr" "$1" | awk -F, 'NR==2{print $3}'; }
	eigen=$(grep -o 'eigen-images=[0-9]*' "$work/out.hdr" | cut -d= -f2 || true)
	first_s=${first_s:-$secs}
	awk -v b="$nb" -v s="$secs" -v k="$kib" -v h="$h" -v w="$w" -v f="$first_s" -v pn="$(psnr "$work/noisy.hdr")" -v p="$(psnr "$work/out.hdr")" -v e="${eigen:--}" \
		'BEGIN{printf "| %d | %.1f | %.3f | %.1f | %.0f | %.2f | %.2f | %.2f | %s |\n", b, s, s*1e6/(h*w*b), s*1e6/(h*w), k/1024, s/f, pn, p, e}'
done
