#!/usr/bin/env bash
# "Finding real noise" in docs/results.md: the sparse-noise detector
# (internal/stages/sparsenoise) against the truth of QRNN3D's five complex-
# noise cases, as the shared generator writes them.
#
#   scripts/find-noise.sh MIXED_CASES_PY WORKDIR [SCENE_DIR...]
#
# For every SCENE_DIR (a CAVE scene's folder of 16-bit PNG bands), the
# 160×160 centre crop is written to WORKDIR/crops/NAME_crop160, and
# MIXED_CASES_PY (mixed_cases.py of the shared peers folder) writes its
# clean cube and cases 1–5 with --seed 1 into WORKDIR/cases. Cubes already
# in WORKDIR/cases (NAME_clean.hdr, NAME_c1.hdr … with their .json) are
# measured as well. scripts/qrnn3d-sparse.py then writes every case's exact
# sparse part, and the table is printed by
# BenchmarkQRNN3D (internal/stages/sparsenoise).
# Needs python3 with numpy and Pillow.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 MIXED_CASES_PY WORKDIR [SCENE_DIR...]" >&2; exit 2; }
gen=$1 work=$2
shift 2
mkdir -p "$work/crops" "$work/cases"
for scene in "$@"; do
	name=$(basename "$scene")_crop160
	python3 - "$scene" "$work/crops/$name" <<'PY'
import glob, os, sys
import numpy as np
from PIL import Image
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
files = sorted(glob.glob(os.path.join(src, '*.png')))
if not files:
    raise SystemExit(f'no *.png in {src}')
for i, f in enumerate(files):
    im = Image.open(f)
    if not im.mode.startswith('I'):
        # An 8-bit band (grey, or grey stored as RGB(A), as some CAVE scenes
        # are): the same intensity as 16 bits, v·257.
        a = np.asarray(im)
        a = a[..., 0] if a.ndim == 3 else a
        im = Image.fromarray(a.astype(np.uint16) * 257)
    w, h = im.size
    x0, y0 = (w - 160) // 2, (h - 160) // 2
    im.crop((x0, y0, x0 + 160, y0 + 160)).save(os.path.join(dst, f'{os.path.basename(dst)}_{i + 1:02d}.png'))
PY
	python3 "$gen" "$work/crops/$name" "$work/cases" --seed 1
done
for first in "$work"/cases/*_c1.hdr; do
	name=$(basename "$first" _c1.hdr)
	python3 scripts/qrnn3d-sparse.py "$work/cases" "$name" --seed 1
done
TDSC_QRNN3D_DIR=$(cd "$work/cases" && pwd) go test -count=1 -run '^$' -bench '^BenchmarkQRNN3D$' -benchtime 1x -v ./internal/stages/sparsenoise | sed -n 's/^        |/|/p'
