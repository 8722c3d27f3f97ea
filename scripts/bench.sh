#!/usr/bin/env bash
# End-to-end benchmark: noise a full CAVE scene (512×512×31; balloons by
# default) at σ = 30 (or each of $SIGMAS) with seed 1, denoise the same
# noisy cube with each method in turn (the default, nonlocal, and the
# paper's 2dsc beside it), and print for each the wall time and the peak
# resident memory (GNU time), the patches its 2DSC coding handled per
# second, and the PSNR/SSIM before and after. Side by side in one run, so
# that their ratio means something on a shared machine.
#
#   scripts/bench.sh [SCENE [DENOISE FLAGS...]]
#
# SCENE defaults to $TDSC_DATA/cave/balloons_ms (TDSC_DATA defaults to
# ../shared/data beside the clone); flags after it go to every `tdsc
# denoise`, e.g. `scripts/bench.sh "" --threads 1`. $METHODS lists the
# methods (default "nonlocal 2dsc") and $SIGMAS the noise levels (default
# "30"; every method runs at every level, on one noisy cube per level). The
# binary is $TDSC (default bin/tdsc, built by `make build`).
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
scene=${1:-}
scene=${scene:-${TDSC_DATA:-../shared/data}/cave/balloons_ms}
shift || true
read -ra methods <<<"${METHODS:-nonlocal 2dsc}"
read -ra sigmas <<<"${SIGMAS:-30}"

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
field() { awk -v k="\"$1\":" '$0 ~ "^      " k { v = $2; sub(/,$/, "", v); print v; exit }' "$2"; }

echo "scene:    $scene"
echo "build:    $("$tdsc" --version)"
echo "settings: σ = ${sigmas[*]}, seed 1, defaults${*:+, $*}"
echo
echo "| σ | method | wall s | peak RSS MiB | 2DSC patches/s | PSNR dB / SSIM |"
echo "|---|---|---|---|---|---|"
for sigma in "${sigmas[@]}"; do
	noisy=$work/noisy$sigma.hdr
	"$tdsc" noise --input "$scene" --sigma "$sigma" --seed 1 --out "$noisy" --force --quiet
	"$tdsc" eval --quiet --ref "$scene" "$noisy" --json >"$work/noisy.json"
	printf '| %s | noisy | | | | %.2f / %.4f |\n' "$sigma" "$(field psnr "$work/noisy.json")" "$(field ssim "$work/noisy.json")"
	for m in "${methods[@]}"; do
		# stderr is a file here, so tdsc logs plain lines (no progress bar).
		/usr/bin/time -v -o "$work/time.txt" \
			"$tdsc" denoise --method "$m" --input "$noisy" --sigma "$sigma" --out "$work/out.hdr" --force "$@" 2>"$work/log.txt" ||
			{ cat "$work/log.txt" >&2; exit 1; }
		patches=$(sed -n 's|^coding patches: \([0-9]*\)/\1$|\1|p' "$work/log.txt" | tail -n 1)
		coding=$(sed -n 's|^coded the patches in \([0-9.]*\) s$|\1|p' "$work/log.txt" | tail -n 1)
		wall=$(sed -n 's|^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): ||p' "$work/time.txt")
		rss=$(sed -n 's|^[[:space:]]*Maximum resident set size (kbytes): ||p' "$work/time.txt")
		"$tdsc" eval --quiet --ref "$scene" "$work/out.hdr" --json >"$work/e.json"
		awk -v sg="$sigma" -v m="$m" -v w="$wall" -v k="$rss" -v n="$patches" -v s="$coding" \
			-v p="$(field psnr "$work/e.json")" -v q="$(field ssim "$work/e.json")" 'BEGIN {
			c = split(w, t, ":"); secs = 0
			for (i = 1; i <= c; i++) secs = secs * 60 + t[i]
			printf "| %s | %s | %.1f | %.0f | %.0f | %.2f / %.4f |\n", sg, m, secs, k / 1024, n / s, p, q
		}'
		grep -E '^(Wiener pass [0-9]+ in|low-rank round [0-9]+ in|spectral subspace|coded the patches)' "$work/log.txt" | sed "s|^|    σ $sigma $m: |" >&2 || true
	done
done
