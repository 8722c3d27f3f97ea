#!/usr/bin/env bash
# Cost of the default method against the cube's size, whole and in strips:
# a scene's centre crops of every SIDE (scripts/pgcubes; 0 is the whole
# scene), Gaussian noise of σ (seed 1), `tdsc denoise` with no flags (the
# default path: noise search, σ estimated) once whole and once in strips of
# TILE lines (--tile), each under GNU time, then eval against the clean
# crop. One row per run, one after the other (compare rows of one run:
# timings of a loaded machine are only meaningful as ratios).
#
#   scripts/sizecost.sh [SCENE [SIGMA [TILE [SIDE...]]]]
#
# Defaults: balloons, 30, 64, 128 256 512. The binary is $TDSC (default
# bin/tdsc, built by `make build`). Prints a Markdown table: wall seconds,
# µs per voxel and per pixel, peak RSS, the strips' time against the whole
# run's of the same crop, and the PSNR of the result.
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
scene=${1:-${TDSC_DATA:-../shared/data}/cave/balloons_ms}
sigma=${2:-30}
tile=${3:-64}
shift $(($# < 3 ? $# : 3))
sides=("$@")
[ ${#sides[@]} -gt 0 ] || sides=(128 256 512)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "| pixels | bands | run | s | µs/voxel | µs/pixel | peak MiB | strips ÷ whole | PSNR |"
echo "|---|---|---|---|---|---|---|---|---|"
for side in "${sides[@]}"; do
	go run ./scripts/pgcubes --input "$scene" --crop "$side" --out "$work/clean.hdr" --force
	"$tdsc" noise -q --input "$work/clean.hdr" --sigma "$sigma" --seed 1 --out "$work/noisy.hdr" --force
	read -r h w nb < <(awk -F'=' '/^ *lines/{l=$2} /^ *samples/{s=$2} /^ *bands/{b=$2} END{print l+0, s+0, b+0}' "$work/noisy.hdr")
	whole_s=
	for run in whole "strips of $tile"; do
		flags=()
		[ "$run" = whole ] || flags=(--tile "$tile")
		/usr/bin/time -f '%e %M' -o "$work/time" "$tdsc" denoise -q --input "$work/noisy.hdr" --out "$work/out.hdr" --force "${flags[@]}"
		read -r secs kib <"$work/time"
		whole_s=${whole_s:-$secs}
		psnr=$("$tdsc" eval -q --csv --ref "$work/clean.hdr" "$work/out.hdr" | awk -F, 'NR==2{print $3}')
		awk -v h="$h" -v w="$w" -v b="$nb" -v r="$run" -v s="$secs" -v k="$kib" -v f="$whole_s" -v p="$psnr" \
			'BEGIN{printf "| %d×%d | %d | %s | %.1f | %.3f | %.1f | %.0f | %.2f | %.2f |\n", h, w, b, r, s, s*1e6/(h*w*b), s*1e6/(h*w), k/1024, s/f, p}'
	done
done
