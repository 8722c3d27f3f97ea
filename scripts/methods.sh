#!/usr/bin/env bash
# Methods side by side: for every scene and σ, add Gaussian noise (seed 1,
# lossless ENVI), denoise the same noisy cube with every method named, and
# print one Markdown row per scene and σ: PSNR/SSIM and wall seconds of each
# method (`tdsc eval --json`, `tdsc denoise` timed alone).
#
#   scripts/methods.sh [-m METHOD,METHOD] [-s SIGMA,SIGMA] SCENE_DIR...
#
# Methods default to nonlocal,2dsc and σ to 10,30,50. The binary is $TDSC
# (default bin/tdsc). Cubes go to a temporary folder removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
methods=nonlocal,2dsc
sigmas=10,30,50
while getopts m:s: opt; do
	case $opt in
	m) methods=$OPTARG ;;
	s) sigmas=$OPTARG ;;
	*) echo "usage: $0 [-m METHODS] [-s SIGMAS] SCENE_DIR..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-m METHODS] [-s SIGMAS] SCENE_DIR..." >&2; exit 2; }
IFS=, read -ra ms <<<"$methods"
IFS=, read -ra ss <<<"$sigmas"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { awk -v k="\"$1\":" '$0 ~ "^      " k { v = $2; sub(/,$/, "", v); print v }' "$2"; }

printf '| scene | σ | noisy |'
for m in "${ms[@]}"; do printf ' %s dB / SSIM / s |' "$m"; done
printf '\n|---|---|---|'
for _ in "${ms[@]}"; do printf -- '---|'; done
printf '\n'
for scene in "$@"; do
	name=$(basename "${scene%/}")
	for s in "${ss[@]}"; do
		"$tdsc" noise --input "$scene" --sigma "$s" --seed 1 --out "$work/noisy.hdr" --force --quiet
		"$tdsc" eval --ref "$scene" "$work/noisy.hdr" --json >"$work/n.json"
		row="| $name | $s | $(printf '%.2f' "$(field psnr "$work/n.json")") |"
		for m in "${ms[@]}"; do
			start=$(date +%s.%N)
			"$tdsc" denoise --method "$m" --input "$work/noisy.hdr" --sigma "$s" --out "$work/out.hdr" --force --quiet
			secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
			"$tdsc" eval --ref "$scene" "$work/out.hdr" --json >"$work/e.json"
			row+=$(printf ' %.2f / %.4f / %.0f |' "$(field psnr "$work/e.json")" "$(field ssim "$work/e.json")" "$secs")
		done
		echo "$row"
	done
done
