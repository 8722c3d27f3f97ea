#!/usr/bin/env bash
# Where signal-dependent noise costs: for a scene's centre crop (as
# scripts/poisson.sh makes it), denoise with the default its
# Poisson-Gaussian cube of (a, b), the i.i.d. twin of equal mean power and
# i.i.d. Gaussian cubes at a ladder of σ, all from seed 1, and print the
# error of each by the clean value of the voxel (scripts/brightness): in
# every bin, the result on Poisson-Gaussian noise against the method's
# result on i.i.d. noise of the bin's own σ.
#
#   scripts/brightness.sh [-p A,B] [-k CROP] SCENE_DIR
#
# The binary is $TDSC (default bin/tdsc); cubes go to a temporary folder
# removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
level=2,16
crop=160
while getopts p:k: opt; do
	case $opt in
	p) level=$OPTARG ;;
	k) crop=$OPTARG ;;
	*) echo "usage: $0 [-p A,B] [-k CROP] SCENE_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-p A,B] [-k CROP] SCENE_DIR" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pgcubes" ./scripts/pgcubes
go build -o "$work/brightness" ./scripts/brightness
"$work/pgcubes" --input "$1" --crop "$crop" --out "$work/clean.hdr" --force
denoised() { "$tdsc" denoise --input "$work/$1.hdr" --out "$work/d_$1.hdr" --force --quiet; }
"$tdsc" noise --input "$work/clean.hdr" --noise-params "$level" --seed 1 --out "$work/pg.hdr" --force --quiet
"$tdsc" noise --input "$work/clean.hdr" --noise-params "$level" --gaussian-twin --seed 1 --out "$work/twin.hdr" --force --quiet
denoised pg
denoised twin
iid=()
for s in 2 3 5 8 12 16 20 24 28 32; do
	"$tdsc" noise --input "$work/clean.hdr" --sigma "$s" --seed 1 --out "$work/g$s.hdr" --force --quiet
	denoised "g$s"
	iid+=("$s=$work/d_g$s.hdr")
done
"$work/brightness" --ref "$work/clean.hdr" --a "${level%,*}" --b "${level#*,}" \
	--iid "$(IFS=,; echo "${iid[*]}")" "Poisson-Gaussian=$work/d_pg.hdr" "twin=$work/d_twin.hdr"
