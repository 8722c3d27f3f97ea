#!/usr/bin/env bash
# The figure behind `make fig5` (the paper's Fig. 5): dictionaries of 64 atoms
# learned from d×d patches (d = 16 and 32, means removed) of natural grayscale
# images by ordinary sparse coding (sc: a patch is a d²-vector) and by 2DSC (a
# patch is a d×1×d tensor), drawn as atom grids. The images are the 550 nm
# bands (band 16) of the four CAVE scenes under $TDSC_DATA/cave.
#
# Two sets of four panels (see docs/fig5.md):
#   docs/fig5-<model>-<d>.png     the figure: images whitened (tdsc atoms
#                                 --whiten: 1/f whitening, unit variance), β = 1.2
#   docs/fig5raw-<model>-<d>.png  pixels on [0, 1], not whitened, β = 0.1
# β = 1.2 on the whitened scale is β = 0.1 on [0, 1] scaled by the ratio of
# the patches' RMS on the two scales (about 12–15 on these images).
#
# One result line per run (model, sizes, whitening, final objective, reading
# and learning times) goes to stdout; the dictionary files go to
# demo-out/fig5/ (or $FIG5_DICTS).
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
for set in fig5 fig5raw; do
	if [ "$set" = fig5 ]; then
		prep=(--whiten --beta 1.2)
	else
		prep=(--beta 0.1)
	fi
	for d in 16 32; do
		samples=10000
		[ "$d" = 32 ] && samples=5000
		for model in sc 2dsc; do
			"$tdsc" atoms --model "$model" --patch "$d" --atoms 64 "${prep[@]}" \
				--samples "$samples" --iters 30 --inner-iters 20 --seed 1 \
				--atoms-png "$out/$set-$model-$d.png" --save-dict "$dicts/$set-$model-$d.json" --force \
				--quiet "${images[@]}"
		done
	done
done
