#!/usr/bin/env bash
# Cost and quality of the default method against the band count on the same
# pixels: a scene's centre crop resampled to every band count (scripts/pgcubes,
# linear interpolation over the same wavelengths), Gaussian noise of σ
# (seed 1), `tdsc denoise` with no flags (the default path: noise search,
# σ estimated) once whole and once in strips of each $TILE lines (--tile),
# each under GNU time, then eval against the resampled clean cube. One row
# per run, one after the other (compare rows of one run: timings of a loaded
# machine are only meaningful as ratios).
#
#   scripts/bandcost.sh [SCENE [CROP [SIGMA [BANDS...]]]]
#
# Defaults: balloons, 256, 30, 31 62 124 224 425 (0 keeps the scene's
# bands). The binary is $TDSC (default bin/tdsc, built by `make build`);
# extra denoise flags go in $DENOISE_FLAGS; $TILE is a comma-separated list
# of strip heights (default 64; 0 for whole runs only; a tile not shorter
# than the crop is left out). Prints a Markdown table: wall and processor
# (user + system) seconds, processor µs per voxel and per pixel, peak RSS,
# the processor time against the first band count's run of the same kind,
# the strips' against the whole run's of the same cube, the PSNR of the
# noisy cube and of the result, and the chain's eigen-images (- for the
# bands).
set -euo pipefail
shopt -s inherit_errexit
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
trap 'exit 130' INT
trap 'exit 143' TERM
# shellcheck source=scripts/costlib.sh
. scripts/costlib.sh
# shellcheck disable=SC2206 # DENOISE_FLAGS is a list of flags
extra=(${DENOISE_FLAGS:-})

echo "| bands | run | wall s | CPU s | µs/voxel | µs/pixel | peak MiB | CPU × first | strips ÷ whole | PSNR noisy | PSNR | eigen-images |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
declare -A first_cpu
for b in "${bands[@]}"; do
	go run ./scripts/pgcubes --input "$scene" --crop "$crop" --bands "$b" --out "$work/clean.hdr" --force
	"$tdsc" noise -q --input "$work/clean.hdr" --sigma "$sigma" --seed 1 --out "$work/noisy.hdr" --force
	dims=$(cube_dims "$work/noisy.hdr")
	read -r h w nb <<<"$dims"
	pn=$(psnr "$work/clean.hdr" "$work/noisy.hdr")
	list=$(cost_runs "${TILE:-64}" "$h")
	mapfile -t runs <<<"$list"
	whole_cpu=
	for run in "${runs[@]}"; do
		times=$(cost_denoise "$run" --input "$work/noisy.hdr" --out "$work/out.hdr" --force "${extra[@]}")
		read -r wall cpu kib <<<"$times"
		whole_cpu=${whole_cpu:-$cpu}
		first_cpu[$run]=${first_cpu[$run]:-$cpu}
		p=$(psnr "$work/clean.hdr" "$work/out.hdr")
		eigen=$(grep -o 'eigen-images=[0-9]*' "$work/out.hdr" | cut -d= -f2 || true)
		awk -v b="$nb" -v r="$run" -v s="$wall" -v c="$cpu" -v k="$kib" -v h="$h" -v w="$w" -v f="${first_cpu[$run]}" -v wc="$whole_cpu" -v pn="$pn" -v p="$p" -v e="${eigen:--}" \
			'BEGIN{printf "| %d | %s | %.1f | %.1f | %.3f | %.1f | %.0f | %.2f | %.2f | %.2f | %.2f | %s |\n", b, r, s, c, c*1e6/(h*w*b), c*1e6/(h*w), k/1024, c/f, c/wc, pn, p, e}'
	done
done
