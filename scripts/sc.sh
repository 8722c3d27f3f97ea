#!/usr/bin/env bash
# The paper's central claim as a measurement: 2DSC against conventional
# (vectorised) sparse coding on exactly the same patches and noisy cube.
# For every scene and σ, add Gaussian noise (seed 1, lossless ENVI) and
# denoise it three ways: 2dsc (r = 30 atoms of 5×5×5), sc with r·q = 150
# vector atoms (equal columns: as many real dictionary columns as 2DSC's
# block-circulant matrix) and sc with 30 (equal atoms). Prints one Markdown
# row per scene and σ: PSNR / SSIM, learning seconds and coding seconds of
# each, as the methods log them.
#
#   scripts/sc.sh [-s SIGMA,SIGMA] SCENE_DIR...
#
# σ defaults to 10,30,50. The binary is $TDSC (default bin/tdsc). Cubes go
# to a temporary folder removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
sigmas=10,30,50
while getopts s: opt; do
	case $opt in
	s) sigmas=$OPTARG ;;
	*) echo "usage: $0 [-s SIGMAS] SCENE_DIR..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-s SIGMAS] SCENE_DIR..." >&2; exit 2; }
IFS=, read -ra ss <<<"$sigmas"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { awk -v k="\"$1\":" '$0 ~ "^      " k { v = $2; sub(/,$/, "", v); print v }' "$2"; }
# The seconds of the log lines "learned … (S s)" and "coded the patches in S s".
learned() { sed -n 's/^learned .*(\([0-9.]*\) s)$/\1/p' "$1"; }
coded() { sed -n 's/^coded the patches in \([0-9.]*\) s$/\1/p' "$1"; }

runs=("2dsc" "sc" "sc --atoms 30")
printf '| scene | σ | 2dsc (30 atoms) dB / SSIM / learn s / code s | sc, 150 atoms (equal columns) | sc, 30 atoms (equal atoms) |\n'
printf '|---|---|---|---|---|\n'
for scene in "$@"; do
	name=$(basename "${scene%/}")
	for s in "${ss[@]}"; do
		"$tdsc" noise --input "$scene" --sigma "$s" --seed 1 --out "$work/noisy.hdr" --force --quiet
		row="| $name | $s |"
		for r in "${runs[@]}"; do
			read -ra args <<<"$r"
			"$tdsc" denoise --method "${args[@]}" --input "$work/noisy.hdr" --sigma "$s" --out "$work/out.hdr" \
				--force 2>"$work/log" </dev/null
			"$tdsc" eval --ref "$scene" "$work/out.hdr" --json >"$work/e.json"
			row+=$(printf ' %.2f / %.4f / %.1f / %.1f |' "$(field psnr "$work/e.json")" "$(field ssim "$work/e.json")" \
				"$(learned "$work/log")" "$(coded "$work/log")")
		done
		echo "$row"
	done
done
