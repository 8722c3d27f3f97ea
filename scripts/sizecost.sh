#!/usr/bin/env bash
# Cost of the default method against the cube's size, whole and in strips:
# a scene's centre crops of every SIDE (scripts/pgcubes; 0 is the whole
# scene), Gaussian noise of σ (seed 1), `tdsc denoise` with no flags (the
# default path: noise search, σ estimated) once whole and once in strips of
# each TILE lines (--tile; a comma-separated list, a tile not shorter than
# the crop left out), each under GNU time, then eval against the clean
# crop. One row per run, one after the other (compare rows of one run:
# timings of a loaded machine are only meaningful as ratios).
#
#   scripts/sizecost.sh [SCENE [SIGMA [TILE [SIDE...]]]]
#
# Defaults: balloons, 30, 64, 128 256 512. The binary is $TDSC (default
# bin/tdsc, built by `make build`). Prints a Markdown table: wall and
# processor (user + system) seconds, processor µs per voxel and per pixel,
# peak RSS, the strips' processor time against the whole run's of the same
# crop, and the PSNR of the result.
set -euo pipefail
shopt -s inherit_errexit
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
trap 'exit 130' INT
trap 'exit 143' TERM
# shellcheck source=scripts/costlib.sh
. scripts/costlib.sh

echo "| pixels | bands | run | wall s | CPU s | µs/voxel | µs/pixel | peak MiB | strips ÷ whole | PSNR |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for side in "${sides[@]}"; do
	go run ./scripts/pgcubes --input "$scene" --crop "$side" --out "$work/clean.hdr" --force
	"$tdsc" noise -q --input "$work/clean.hdr" --sigma "$sigma" --seed 1 --out "$work/noisy.hdr" --force
	dims=$(cube_dims "$work/noisy.hdr")
	read -r h w nb <<<"$dims"
	list=$(cost_runs "$tile" "$h")
	mapfile -t runs <<<"$list"
	whole_cpu=
	for run in "${runs[@]}"; do
		times=$(cost_denoise "$run" --input "$work/noisy.hdr" --out "$work/out.hdr" --force)
		read -r wall cpu kib <<<"$times"
		whole_cpu=${whole_cpu:-$cpu}
		p=$(psnr "$work/clean.hdr" "$work/out.hdr")
		awk -v h="$h" -v w="$w" -v b="$nb" -v r="$run" -v s="$wall" -v c="$cpu" -v k="$kib" -v f="$whole_cpu" -v p="$p" \
			'BEGIN{printf "| %d×%d | %d | %s | %.1f | %.1f | %.3f | %.1f | %.0f | %.2f | %.2f |\n", h, w, b, r, s, c, c*1e6/(h*w*b), c*1e6/(h*w), k/1024, c/f, p}'
	done
done
