#!/usr/bin/env bash
# The coding step of 2DSC against numpy, side by side: BenchmarkEncodePaper
# (the Go encoder, OpenBLAS build, default evaluation) and
# scripts/encode-fista.py (the same FISTA on the block-circulant matrix,
# all patches as one matrix) on the same patches, dictionary, β, step and
# iterations, then the ratio per β and thread count.
#
#   scripts/bench-encode.sh [COUNT]
#
# COUNT (default 5) is the number of runs of each side; the ratio is that
# of the medians. One thread is the benchmark's threads=1 against numpy
# with OPENBLAS_NUM_THREADS=1, two threads threads=2 against
# OPENBLAS_NUM_THREADS=2. The shared data is $TDSC_DATA (default
# ../shared/data beside the clone); numpy is /usr/bin/python3's unless
# $PYTHON says otherwise. numpy's codes are checked against the Go codes
# (maxdiff, support-mismatch).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
export TDSC_DATA=${TDSC_DATA:-$(cd .. && pwd)/shared/data}
python=${PYTHON:-/usr/bin/python3}
crop=$TDSC_DATA/reference/balloons_crop/noisy_sigma20
export CGO_LDFLAGS="${CGO_LDFLAGS:+$CGO_LDFLAGS }-lopenblas"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The patches, the dictionary and the Go codes, for numpy to read.
go test -tags openblas -count=1 -run '^$' -bench 'EncodePaper/.*/auto/threads=1$' -benchtime 1x ./internal/tsc \
	-args -encode-export "$work" >/dev/null

go test -tags openblas -run '^$' -bench 'EncodePaper/.*/auto/' -count "$count" ./internal/tsc |
	tee "$work/go.txt"
for threads in 1 2; do
	OPENBLAS_NUM_THREADS=$threads "$python" scripts/encode-fista.py "$crop" "$work" --repeat "$count" |
		tee -a "$work/numpy.txt"
done

echo
echo "| β | threads | Go s (median) | numpy s (median) | numpy / Go |"
echo "|---|---|---|---|---|"
awk '
	function median(list,   a, n, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	FILENAME ~ /go.txt$/ && /^BenchmarkEncodePaper/ {
		split($1, f, "/"); sub("beta=", "", f[2]); sub("threads=", "", f[4]); sub("-.*", "", f[4])
		go[f[2] " " f[4]] = go[f[2] " " f[4]] " " $3 / 1e9
	}
	FILENAME ~ /numpy.txt$/ && /^numpy beta=/ {
		b = $2; sub("beta=", "", b); th = $3; sub("threads=", "", th); s = $4; sub("seconds=", "", s)
		np[b " " th] = s
	}
	END {
		# By β, then threads.
		for (k in np) { keys[++n] = k; split(k, f, " "); rank[k] = f[1] * 1000 + f[2] }
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && rank[keys[j-1]] > rank[keys[j]]; j--) { t = keys[j]; keys[j] = keys[j-1]; keys[j-1] = t }
		for (i = 1; i <= n; i++) {
			k = keys[i]; split(k, f, " ")
			if (!(k in go)) continue
			g = median(go[k])
			printf "| %s | %s | %.4f | %.3f | %.1f× |\n", f[1], f[2], g, np[k], np[k] / g
		}
	}
' "$work/go.txt" "$work/numpy.txt"
