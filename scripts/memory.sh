#!/usr/bin/env bash
# Peak memory per voxel of every command that reads a cube whole, for the
# bytes per voxel each declares (package cmd, memoryNeeds): each command
# runs on one cube (a full CAVE scene, 512×512×31, as uint8 and as
# float32 .npy; balloons by default) under GNU time, and the peak resident
# memory less the process's base (the same command's --help) is divided by
# the voxels.
#
#   scripts/memory.sh [SCENE]
#
# The binary is $TDSC (default bin/tdsc, built by `make build`).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
scene=${1:-${TDSC_DATA:-../shared/data}/cave/balloons_ms}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

peak() { # peak RSS in KiB of a command
	/usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	cat "$work/rss"
}
"$tdsc" noise -q --input "$scene" --sigma 1 --seed 1 --dtype uint8 --out "$work/u8.npy"
"$tdsc" noise -q --input "$scene" --sigma 20 --seed 2 --out "$work/f32.npy"
read -r h w b < <(python3 -c "import numpy as n; print(*n.load('$work/u8.npy', mmap_mode='r').shape)" 2>/dev/null || echo "512 512 31")
voxels=$((h * w * b))
base=$(peak "$tdsc" --help)
echo "cube: $h×$w×$b ($voxels voxels); base RSS $base KiB"
printf '%-44s %10s %8s\n' command "peak KiB" "B/voxel"
run() {
	local name=$1
	shift
	local kib
	kib=$(peak "$@")
	printf '%-44s %10d %8.1f\n' "$name" "$kib" "$(echo "($kib - $base) * 1024 / $voxels" | bc -l)"
}
for in in u8 f32; do
	run "noise --sigma 10 ($in)" "$tdsc" noise -q --input "$work/$in.npy" --sigma 10 --out "$work/n.npy" --force
	run "noise --case mixture ($in)" "$tdsc" noise -q --input "$work/$in.npy" --case mixture --out "$work/n.npy" --force
	run "eval --ref ($in)" "$tdsc" eval -q --ref "$work/$in.npy" "$work/f32.npy"
	run "eval --noref ($in)" "$tdsc" eval -q --noref "$work/$in.npy"
	run "eval --noref --noisy ($in)" "$tdsc" eval -q --noref --noisy "$work/f32.npy" "$work/$in.npy"
	run "inspect ($in)" "$tdsc" inspect -q --noisy "$work/f32.npy" --out "$work/i.png" --force "$work/$in.npy"
	run "compare ($in)" "$tdsc" compare -q --ref "$work/$in.npy" --out "$work/c.png" --force "$work/f32.npy"
	run "train --sigma 20 ($in)" "$tdsc" train -q --input "$work/$in.npy" --sigma 20 --save-dict "$work/d.json" --force --iters 1
done
