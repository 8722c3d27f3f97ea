#!/usr/bin/env bash
# Strip processing at scale: synthetic N×N×64 float32 ENVI cubes (a mosaic
# of the CAVE scenes, shifted, 64 bands; scripts/bigcube) denoised with
# `tdsc denoise --method 2dsc` under a memory budget, for N = 1024, 2048,
# 4096 by default (256 MiB, 1 GiB and 4 GiB on disk). For each size it
# prints the wall time, the peak RSS (GNU time) and the seconds per million
# voxels, then the fit of time against voxels: the exponent of a power law
# (1 for linear) and the line through the origin.
#
#   scripts/bench-tiles.sh [--sizes N,N,...] [--sigma S] [--max-memory SIZE] [--flags 'DENOISE FLAGS'] [WORKDIR]
#
# --sigma (default 10) is the noise added and given to denoise; at σ < 20
# 2dsc steps its patches by 2, four times fewer than at σ ≥ 20. --flags
# passes more denoise flags (e.g. '--stride 5', which codes 6.25 times
# fewer patches than step 2 and brings the 4096² run from hours to
# minutes; the memory of a strip does not depend on it). --max-memory
# defaults to 1536M, so that the peak stays under 2 GiB. WORKDIR (default
# bench-tiles-out) keeps the cubes between runs; the denoised cubes are
# deleted once measured. Needs $TDSC_DATA (the folder holding cave/) and
# GNU time (/usr/bin/time). The binary is $TDSC (default bin/tdsc).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
usage() { echo "usage: $0 [--sizes N,N,...] [--sigma S] [--max-memory SIZE] [--flags 'DENOISE FLAGS'] [WORKDIR]" >&2; exit 2; }
sizes=1024,2048,4096
sigma=10
budget=1536M
extra=
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) [ $# -ge 2 ] || usage; sizes=$2; shift 2 ;;
	--sigma) [ $# -ge 2 ] || usage; sigma=$2; shift 2 ;;
	--max-memory) [ $# -ge 2 ] || usage; budget=$2; shift 2 ;;
	--flags) [ $# -ge 2 ] || usage; extra=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) echo "$0: unknown option $1" >&2; usage ;;
	*) args+=("$1"); shift ;;
	esac
done
[ ${#args[@]} -le 1 ] || usage
work=${args[0]:-bench-tiles-out}
[ -x /usr/bin/time ] || { echo "$0: needs GNU time (/usr/bin/time; Debian package time)" >&2; exit 1; }
data=${TDSC_DATA:?set TDSC_DATA to the shared data folder (the one holding cave/)}
mkdir -p "$work"
IFS=, read -ra ns <<<"$sizes"
read -ra extra_args <<<"$extra"

echo "| cube | voxels | wall s | peak RSS | s per Mvoxel |"
echo "|---|---|---|---|---|"
rows=()
for n in "${ns[@]}"; do
	[[ $n =~ ^[0-9]+$ ]] || { echo "$0: bad size $n" >&2; exit 2; }
	cube=$work/big$n-sigma$sigma.hdr
	if [ ! -e "$cube" ]; then
		echo "generating $cube" >&2
		go run ./scripts/bigcube --scenes "$data/cave" --size "$n" --bands 64 --sigma "$sigma" --out "$cube"
	fi
	out=$work/denoised$n.hdr
	/usr/bin/time -f '%e %M' -o "$work/time$n" \
		"$tdsc" denoise --method 2dsc --input "$cube" --out "$out" --sigma "$sigma" --max-memory "$budget" --force "${extra_args[@]}"
	rm -f "$out" "${out%.hdr}.img"
	read -r wall kib <"$work/time$n"
	voxels=$((n * n * 64))
	rows+=("$voxels $wall")
	awk -v n="$n" -v v="$voxels" -v t="$wall" -v k="$kib" 'BEGIN {
		printf "| %d×%d×64 | %.3g | %.0f | %.0f MiB | %.2f |\n", n, n, v, t, k / 1024, t / (v / 1e6) }'
done
if [ ${#rows[@]} -ge 2 ]; then
	printf '%s\n' "${rows[@]}" | awk '{
		x = log($1); y = log($2); n++; sx += x; sy += y; sxx += x * x; sxy += x * y
		vv += $1 * $1; vt += $1 * $2 }
	END {
		slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
		printf "\nfit: time ∝ voxels^%.3f (log-log least squares; 1 is linear); through the origin %.3f s per Mvoxel\n", slope, vt / vv * 1e6 }'
fi
