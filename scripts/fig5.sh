#!/usr/bin/env bash
# The figure behind `make fig5` (the paper's Fig. 5): dictionaries of 64 atoms
# learned from d×d patches (d = 16 and 32, means removed, pixels on [0, 1],
# β = 0.1) of natural grayscale images by ordinary sparse coding (sc: a patch
# is a d²-vector) and by 2DSC (a patch is a d×1×d tensor), drawn as atom grids
# into docs/fig5-<model>-<d>.png. The images are the 550 nm bands (band 16)
# of the four CAVE scenes under $TDSC_DATA/cave. One result line per run
# (model, sizes, final objective, reading and learning times) goes to stdout;
# the dictionary files go to demo-out/fig5/ (or $FIG5_DICTS).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${1:-bin/tdsc}
: "${TDSC_DATA:?set TDSC_DATA to the shared data folder (the one holding cave/)}"
out=${FIG5_OUT:-docs}
dicts=${FIG5_DICTS:-demo-out/fig5}
mkdir -p "$out" "$dicts"

images=()
for scene in balloons chart_and_stuffed_toy superballs watercolors; do
	images+=("$TDSC_DATA/cave/${scene}_ms/${scene}_ms/${scene}_ms_16.png")
done

# Same samples, iterations and seed for both models at a given d.
for d in 16 32; do
	samples=10000
	[ "$d" = 32 ] && samples=5000
	for model in sc 2dsc; do
		"$tdsc" atoms --model "$model" --patch "$d" --atoms 64 --beta 0.1 \
			--samples "$samples" --iters 30 --inner-iters 20 --seed 1 \
			--out "$out/fig5-$model-$d.png" --dict "$dicts/fig5-$model-$d.json" --force \
			--quiet "${images[@]}"
	done
done
