# shellcheck shell=bash disable=SC2154 # $tdsc and $work are the caller's
# What scripts/bandcost.sh and scripts/sizecost.sh share (sourced, not
# run): the runs of one cube (whole, then in strips of each TILE lines), the
# timing of a run, a cube's size and the PSNR of a result. Needs $tdsc (the
# binary) and $work (a scratch folder the caller removes).
#
# A run's processor time (user + system) is the figure to compare: on a
# shared machine the wall time of the same run swings with the others' load,
# its processor time much less.

# cost_runs TILES LINES: the runs of a cube of LINES lines, one a line:
# "whole", then "strips of T" for each T of the comma-separated TILES (empty
# or 0: none) shorter than the cube (one strip would be the whole cube).
cost_runs() {
	local tiles t
	IFS=, read -ra tiles <<<"$1"
	echo whole
	for t in "${tiles[@]}"; do
		[[ $t =~ ^[0-9]+$ ]] || { echo "$0: a tile must be a number of lines, not '$t'" >&2; return 1; }
		[ "$t" -eq 0 ] || [ "$t" -ge "$2" ] || echo "strips of $t"
	done
}

# cost_denoise RUN ARGS...: tdsc denoise -q ARGS (with --tile for a strips
# RUN) under GNU time; prints "WALL CPU KIB": seconds elapsed, user + system
# seconds, peak RSS in KiB.
cost_denoise() {
	local run=$1 flags=()
	shift
	[ "$run" = whole ] || flags=(--tile "${run#strips of }")
	/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$tdsc" denoise -q "$@" "${flags[@]}"
	awk 'NF == 4 {print $1, $2 + $3, $4; ok = 1} END {exit !ok}' "$work/time"
}

# cube_dims HDR: prints "LINES SAMPLES BANDS" of an ENVI header.
cube_dims() {
	awk -F'=' '/^ *lines *=/{l=$2} /^ *samples *=/{s=$2} /^ *bands *=/{b=$2}
		END{if (l > 0 && s > 0 && b > 0) print l+0, s+0, b+0
			else {print FILENAME ": no lines, samples or bands" >"/dev/stderr"; exit 1}}' "$1"
}

# psnr REF HDR: the PSNR of HDR against REF (tdsc eval's CSV).
psnr() {
	local p
	p=$("$tdsc" eval -q --csv --ref "$1" "$2" | awk -F, 'NR==1{for (i = 1; i <= NF; i++) if ($i == "psnr") c = i} NR==2 && c {print $c}')
	[ -n "$p" ] || { echo "$0: no PSNR in tdsc eval's output for $2" >&2; return 1; }
	echo "$p"
}
