#!/usr/bin/env bash
# The noise-model decision on the cubes users make: for every scene, tdsc
# noise --seed 1 with each --sigma, and (with -c) QRNN3D's cases 1–5 and
# Poisson-Gaussian noise of each -p A,B pair (with -c as well, cases 2–5
# over it), written lossless (ENVI), then
# tdsc eval --noref --json; one Markdown row per cube: the noise, the model
# decided, the pooled slope z, the median bright/dark variance ratio and
# the mean a and b over bands.
#
#   scripts/noise-model.sh [-s SIGMA,SIGMA] [-c] [-p A,B:A,B] SCENE_DIR...
#
# σ defaults to 5,10,30,50; no cases and no Poisson-Gaussian pairs unless
# asked. The binary is $TDSC (default bin/tdsc). Cubes go to a temporary
# folder removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
sigmas=5,10,30,50
cases=
pairs=
usage="usage: $0 [-s SIGMAS] [-c] [-p A,B:A,B] SCENE_DIR..."
while getopts s:cp: opt; do
	case $opt in
	s) sigmas=$OPTARG ;;
	c) cases="1 2 3 4 5" ;;
	p) pairs=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
IFS=, read -ra ss <<<"$sigmas"
IFS=: read -ra ps <<<"$pairs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The first value of a key in eval's JSON: the input's own (mean) figures
# come before its min, max and bands.
field() { awk -v k="\"$1\":" '$1 == k { v = $2; sub(/,$/, "", v); gsub(/"/, "", v); print v; exit }' "$2"; }
row() { # SCENE NOISE FLAGS...
	local scene=$1 label=$2
	shift 2
	"$tdsc" noise --input "$scene" "$@" --seed 1 --out "$work/n.hdr" --force --quiet
	"$tdsc" eval --noref "$work/n.hdr" --json --quiet >"$work/e.json"
	printf '| %s | %s | %s | %.1f | %.2f | %.3f | %.1f |\n' "$(basename "$scene")" "$label" \
		"$(field noise_model "$work/e.json")" "$(field noise_z "$work/e.json")" "$(field noise_ratio "$work/e.json")" \
		"$(field a "$work/e.json")" "$(field b "$work/e.json")"
}
echo "| scene | noise | model | slope z | bright/dark | mean a | mean b |"
echo "|---|---|---|---|---|---|---|"
for scene in "$@"; do
	for s in "${ss[@]}"; do row "$scene" "σ = $s" --sigma "$s"; done
	for k in $cases; do row "$scene" "case $k" --case "$k"; done
	for p in "${ps[@]}"; do
		row "$scene" "a, b = ${p/,/, }" --noise-params "$p"
		for k in $cases; do
			[ "$k" = 1 ] || row "$scene" "case $k over a, b = ${p/,/, }" --noise-params "$p" --case "$k"
		done
	done
done
