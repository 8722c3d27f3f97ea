#!/usr/bin/env bash
# Signal-dependent noise against its i.i.d. twin, side by side: for every
# scene, number of bands and noise level (a, b), make the clean cube (the
# centre crop, resampled to the bands; scripts/pgcubes), add
# Poisson-Gaussian noise y = a·Poisson(x/a) + N(0, b) and, from the same
# seed, the i.i.d. Gaussian noise of the same mean power (tdsc noise
# --noise-params A,B [--gaussian-twin]), denoise both with the default
# (no flag), and print one Markdown row: the equal-power σ, PSNR, wall and
# CPU seconds on each, the PSNR difference and the time ratios. With -c, the
# same over the sparse part of QRNN3D's cases (tdsc noise --case N) on top
# of each noise.
#
#   scripts/poisson.sh [-b BANDS,…] [-p A,B/A,B…] [-c CASE,…] [-k CROP] SCENE_DIR...
#
# Bands default to 31 (0 or the scene's own count keeps them), levels to
# 2,16/0.5,36/4,1, the crop to 160 (0: whole, as for the 101×101 chart
# crop, which is smaller), cases to none (the plain noise; "0" in the list
# is the plain noise too). The binary is $TDSC (default bin/tdsc); cubes go
# to a temporary folder removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
tdsc=${TDSC:-bin/tdsc}
bands=31
levels=2,16/0.5,36/4,1
cases=0
crop=160
while getopts b:p:c:k: opt; do
	case $opt in
	b) bands=$OPTARG ;;
	p) levels=$OPTARG ;;
	c) cases=$OPTARG ;;
	k) crop=$OPTARG ;;
	*) echo "usage: $0 [-b BANDS] [-p A,B/A,B] [-c CASES] [-k CROP] SCENE_DIR..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-b BANDS] [-p A,B/A,B] [-c CASES] [-k CROP] SCENE_DIR..." >&2; exit 2; }
IFS=, read -ra bs <<<"$bands"
IFS=/ read -ra ps <<<"$levels"
IFS=, read -ra cs <<<"$cases"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pgcubes" ./scripts/pgcubes
field() { awk -v k="\"$1\":" '$0 ~ "^      " k { v = $2; sub(/,$/, "", v); print v }' "$2"; }

# run NOISY: denoise with the default, print "PSNR WALL CPU": the wall
# and the CPU (user + system) seconds of the run. On a shared machine the
# CPU seconds are the steadier measure of the work.
run() {
	local t
	t=$({ TIMEFORMAT='%R %U %S'; time "$tdsc" denoise --input "$1" --out "$work/out.hdr" --force --quiet; } 2>&1)
	"$tdsc" eval --ref "$work/clean.hdr" "$work/out.hdr" --json >"$work/e.json"
	echo "$(field psnr "$work/e.json") $(awk '{ print $1, $2 + $3 }' <<<"$t")"
}

echo '| scene | bands | a, b | case | equal-power σ | Poisson-Gaussian dB / wall s / CPU s | i.i.d. twin dB / wall s / CPU s | Δ dB | time ratio wall / CPU |'
echo '|---|---|---|---|---|---|---|---|---|'
for scene in "$@"; do
	name=$(basename "${scene%/}")
	k=$crop
	[ "$name" = chart_crop101 ] && k=0
	for b in "${bs[@]}"; do
		"$work/pgcubes" --input "$scene" --crop "$k" --bands "$b" --out "$work/clean.hdr" --force
		for p in "${ps[@]}"; do
			for c in "${cs[@]}"; do
				extra=()
				[ "$c" != 0 ] && extra=(--case "$c")
				sigma=$("$tdsc" noise --input "$work/clean.hdr" --noise-params "$p" "${extra[@]}" --seed 1 --out "$work/pg.hdr" --force 2>&1 |
					sed -n 's/^mean noise power.* σ = \(.*\)$/\1/p')
				"$tdsc" noise --input "$work/clean.hdr" --noise-params "$p" --gaussian-twin "${extra[@]}" --seed 1 --out "$work/twin.hdr" --force --quiet
				read -r pg_psnr pg_s pg_cpu < <(run "$work/pg.hdr")
				read -r tw_psnr tw_s tw_cpu < <(run "$work/twin.hdr")
				awk -v n="$name" -v b="$b" -v p="$p" -v c="$c" -v s="$sigma" -v pp="$pg_psnr" -v ps="$pg_s" -v pc="$pg_cpu" \
					-v tp="$tw_psnr" -v ts="$tw_s" -v tc="$tw_cpu" 'BEGIN {
					printf "| %s | %s | %s | %s | %.2f | %.2f / %.1f / %.1f | %.2f / %.1f / %.1f | %+.2f | %.2f / %.2f |\n",
						n, b, p, (c == 0 ? "—" : c), s, pp, ps, pc, tp, ts, tc, pp - tp, ps / ts, pc / tc }'
			done
		done
	done
done
