#!/usr/bin/env bash
# End-to-end benchmark: noise a full CAVE scene (512×512×31; balloons by
# default) at σ = 30 with seed 1, denoise it with the default settings, and
# print the wall time, the patches coded per second, the peak resident
# memory (GNU time) and the PSNR before and after.
#
#   scripts/bench.sh [SCENE [DENOISE FLAGS...]]
#
# SCENE defaults to $TDSC_DATA/cave/balloons_ms (TDSC_DATA defaults to
# ../shared/data beside the clone); flags after it go to `tdsc denoise`, e.g.
# `scripts/bench.sh "" --stride 1`. The binary is $TDSC (default bin/tdsc,
# built by `make build`).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
scene=${1:-}
scene=${scene:-${TDSC_DATA:-../shared/data}/cave/balloons_ms}
shift || true

if [ ! -x "$tdsc" ]; then
	echo "bench.sh: no tdsc binary at $tdsc (run make build, or set TDSC)" >&2
	exit 1
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench.sh: GNU time (/usr/bin/time) is needed for the peak memory (Debian package: time)" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$tdsc" noise --input "$scene" --sigma 30 --seed 1 --out "$work/noisy30.hdr" --quiet
# stderr is a file here, so tdsc logs plain lines (no progress bar).
/usr/bin/time -v -o "$work/time.txt" \
	"$tdsc" denoise --input "$work/noisy30.hdr" --sigma 30 --out "$work/denoised30.hdr" "$@" 2>"$work/log.txt" ||
	{ cat "$work/log.txt" >&2; exit 1; }

patches=$(sed -n 's|^coding patches: \([0-9]*\)/\1$|\1|p' "$work/log.txt" | tail -n 1)
coding=$(sed -n 's|^coded the patches in \([0-9.]*\) s$|\1|p' "$work/log.txt")
wall=$(sed -n 's|^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): ||p' "$work/time.txt")
rss=$(sed -n 's|^[[:space:]]*Maximum resident set size (kbytes): ||p' "$work/time.txt")

echo "scene:       $scene"
echo "build:       $("$tdsc" --version)"
echo "settings:    σ = 30, seed 1, defaults${*:+, $*}"
echo "wall time:   $wall (m:ss, noisy cube read to denoised cube written)"
awk -v n="$patches" -v s="$coding" 'BEGIN { printf "patches:     %d coded in %.1f s = %.0f patches/s\n", n, s, n / s }'
awk -v k="$rss" 'BEGIN { printf "peak RSS:    %.0f MiB\n", k / 1024 }'
scene=$(realpath "$scene")
tdsc=$(realpath "$tdsc")
cd "$work" && "$tdsc" eval --ref "$scene" noisy30.hdr denoised30.hdr
