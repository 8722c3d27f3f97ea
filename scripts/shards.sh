#!/usr/bin/env bash
# A flightline-shaped cube denoised in one run and in shards: balloons
# resampled to 224 bands and stacked into 1024 lines × 256 samples
# (scripts/pgcubes --flightline), QRNN3D's mixture added (`tdsc noise
# --case 5 --seed 1`), then `tdsc denoise` with no flag but --max-memory,
# once, and as N shards at once under GNU parallel. It prints the peak RSS
# and wall time of each (GNU time), the PSNR of the result against the
# clean cube, and whether the shards' file is the single run's, byte for
# byte (cmp).
#
#   scripts/shards.sh [--max-memory SIZE] [--shards N] [WORKDIR]
#
# --max-memory defaults to 1G, --shards to 2; WORKDIR (default
# shards-out) keeps the cubes between runs. Needs $TDSC_DATA (the folder
# holding cave/), GNU time (/usr/bin/time) and GNU parallel. The binary is
# $TDSC (default bin/tdsc).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
usage() { echo "usage: $0 [--max-memory SIZE] [--shards N] [WORKDIR]" >&2; exit 2; }
budget=1G
shards=2
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--max-memory) [ $# -ge 2 ] || usage; budget=$2; shift 2 ;;
	--shards) [ $# -ge 2 ] || usage; shards=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) echo "$0: unknown option $1" >&2; usage ;;
	*) args+=("$1"); shift ;;
	esac
done
work=${args[0]:-shards-out}
mkdir -p "$work"
data=${TDSC_DATA:?set TDSC_DATA to the folder holding cave/}
if [ ! -e "$work/clean.hdr" ]; then
	go run ./scripts/pgcubes --input "$data/cave/balloons_ms" --crop 0 --bands 224 --flightline --out "$work/clean.hdr"
fi
if [ ! -e "$work/c5.hdr" ]; then
	"$tdsc" noise -q --input "$work/clean.hdr" --case 5 --seed 1 --out "$work/c5.hdr"
fi
rm -f "$work"/one.* "$work"/sharded.* "$work"/.sharded.*
timed() { # label, command…: wall s and peak RSS of the command
	local label=$1
	shift
	/usr/bin/time -f "$label: %e s, peak RSS %M KiB" -a -o "$work/times" "$@"
}
: >"$work/times"
timed "one run" "$tdsc" denoise --input "$work/c5.hdr" --out "$work/one.hdr" --max-memory "$budget" 2>"$work/one.log"
export -f timed
export tdsc work budget shards
seq 1 "$shards" | parallel --halt now,fail=1 \
	'timed "shard {}/$shards" "$tdsc" denoise --input "$work/c5.hdr" --out "$work/sharded.hdr" --max-memory "$budget" --shard {}/$shards 2>"$work/shard{}.log"'
cat "$work/times"
"$tdsc" eval -q --ref "$work/clean.hdr" "$work/one.hdr"
cmp "$work/one.img" "$work/sharded.img" && cmp "$work/one.hdr" "$work/sharded.hdr" &&
	echo "the $shards shards wrote the single run's file, byte for byte"
