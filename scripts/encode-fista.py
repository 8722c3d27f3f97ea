#!/usr/bin/env python3
"""The coding step of 2DSC solved the textbook way in numpy: the baseline of
scripts/bench-encode.sh.

    encode-fista.py CROP_DIR EXPORT_DIR [--beta 50 100] [--repeat 3]

CROP_DIR is the σ = 20 noisy balloons crop (reference/balloons_crop/
noisy_sigma20 of the shared data); EXPORT_DIR holds what the Go
benchmark BenchmarkEncodePaper wrote there (given -encode-export): the
patches, the dictionary and the Go codes.

Every patch is a vector of its M·K = 125 values (band-major, as the Go
Tensor layout stores a lateral slice) and the problem is

    min_b ½‖x − bcirc(D) b‖² + β‖b‖₁

with bcirc(D) the MK × RK block-circulant matrix, block (s, t) the frontal
slice D^((s−t) mod K), for all 21168 patches at once as one N × 125 matrix,
so that numpy's BLAS does matrix–matrix products. FISTA as the Go encoder
runs it: step 1/L with L = λ_max(bcirc(D)ᵀbcirc(D)), A = I − bcirc(D)ᵀbcirc(D)/L
and C = X bcirc(D)/L computed once, then per iteration V = Y A + C,
B_p = V − clip(V, −β/L, β/L) (the soft threshold), t_{p+1} = (1+√(1+4t_p²))/2,
Y_{p+1} = B_p + ((t_p − 1)/t_{p+1})(B_p − B_{p−1}); 50 iterations from zero,
no tolerance. The timed part is what the Go benchmark times (the correlation
C and the iterations, not the dictionary's Gram matrix and L); every array
operation writes into preallocated arrays.

The script checks that its patches are those of the Go test bit for bit,
and compares its codes with the Go codes. It prints one line per β:

    numpy beta=50 threads=1 seconds=... (each repeat ...) maxdiff=... support=...

threads is OPENBLAS_NUM_THREADS (or "default" when unset).
"""

import argparse
import ctypes
import os
import sys
import time

import numpy as np
from PIL import Image

SIZE, BANDS, P, Q, GRID, STEP = 96, 31, 5, 5, 28, 3
M, K, R = P * P, Q, 30
ITERS = 50


def balloons_patches(crop_dir):
    """The 5×5×5 patches of the crop at a 28×28 grid (step 3) and all 27
    band windows, mean removed, as encBalloonsPatches builds them: rows in
    the order (band window, grid row, grid column), columns t·25 + dy·5 + dx.
    The mean is summed in the Go test's order so the values match bit for
    bit."""
    cube = np.empty((BANDS, SIZE, SIZE))
    for band in range(BANDS):
        name = os.path.join(crop_dir, "balloons_ms_%02d.png" % (band + 1))
        img = np.array(Image.open(name))
        if img.shape != (SIZE, SIZE) or img.max() > 65535:
            sys.exit("%s: want a %d×%d 16-bit grayscale PNG" % (name, SIZE, SIZE))
        cube[band] = img.astype(np.float64) * 255 / 65535
    windows = BANDS - Q + 1
    n = GRID * GRID * windows
    x = np.empty((n, Q, P, P))
    pos = STEP * np.arange(GRID)
    for b0 in range(windows):
        rows = slice(b0 * GRID * GRID, (b0 + 1) * GRID * GRID)
        for t in range(Q):
            for dy in range(P):
                for dx in range(P):
                    x[rows, t, dy, dx] = cube[b0 + t][np.ix_(pos + dy, pos + dx)].ravel()
    x = x.reshape(n, M * K)
    total = np.zeros(n)
    for c in range(M * K):
        total += x[:, c]
    x -= (total / (M * K))[:, None]
    return x


def bcirc(d):
    """The MK × RK block-circulant matrix of d (R × K × M, d[q, t, i] =
    D(i, q, t)): rows s·M + i, columns t·R + q, block (s, t) = D^((s−t) mod K)."""
    a = np.empty((K * M, K * R))
    for s in range(K):
        for t in range(K):
            a[s * M:(s + 1) * M, t * R:(t + 1) * R] = d[:, (s - t) % K, :].T
    return a


def fista(x, a, beta, iters):
    """The codes (N × RK, columns t·R + q) after iters FISTA iterations
    from zero for the patches x (N × MK) and the block-circulant a."""
    gram = a.T @ a
    lip = np.linalg.eigvalsh(gram)[-1]
    step = np.eye(gram.shape[0]) - gram / lip  # symmetric, so Y A = (A Y)ᵀ
    tau = beta / lip
    n, rk = x.shape[0], a.shape[1]
    start = time.perf_counter()
    corr = x @ a
    corr /= lip
    b = np.zeros((n, rk))       # B_p
    prev = np.zeros((n, rk))    # B_{p−1}
    y = np.zeros((n, rk))       # Y_p
    tmp = np.empty((n, rk))
    t = 1.0
    for _ in range(iters):
        tn = (1 + np.sqrt(1 + 4 * t * t)) / 2
        om = (t - 1) / tn
        t = tn
        b, prev = prev, b
        np.matmul(y, step, out=b)
        b += corr
        np.clip(b, -tau, tau, out=tmp)
        b -= tmp
        np.subtract(b, prev, out=y)
        y *= om
        y += b
    return b, time.perf_counter() - start


def blas_name():
    """numpy's BLAS as the process loaded it: the library file and, for
    OpenBLAS, its own configuration string (version and kernel)."""
    np.ones((64, 64)) @ np.ones((64, 64))
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in os.path.basename(path) and ".so" in path:
                libs.add(path)
    names = []
    for path in sorted(libs):
        name = os.path.realpath(path)
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_config.restype = ctypes.c_char_p
            name = lib.openblas_get_config().decode() + " (" + name + ")"
        except (OSError, AttributeError):
            pass
        if not any(n.split(" (")[0] == name.split(" (")[0] for n in names):
            names.append(name)
    return ", ".join(names) or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("crop_dir")
    ap.add_argument("export_dir")
    ap.add_argument("--beta", type=float, nargs="+", default=[50, 100])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    x = balloons_patches(args.crop_dir)
    n = x.shape[0]
    gx = np.fromfile(os.path.join(args.export_dir, "patches.f64"), "<f8")
    if gx.shape != (n * M * K,) or not np.array_equal(gx.reshape(n, M * K), x):
        sys.exit("encode-fista.py: the patches differ from the Go test's")
    d = np.fromfile(os.path.join(args.export_dir, "dictionary.f64"), "<f8").reshape(R, K, M)
    a = bcirc(d)
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print("numpy %s, BLAS %s, OPENBLAS_NUM_THREADS=%s" % (np.__version__, blas_name(), threads))
    for beta in args.beta:
        times = []
        for _ in range(args.repeat):
            codes, sec = fista(x, a, beta, ITERS)
            times.append(sec)
        go = np.fromfile(os.path.join(args.export_dir, "codes-beta%g.f64" % beta), "<f8").reshape(n, K * R)
        # Entries at the threshold may differ by round-off in the last
        # iterations; count where one side is zero and the other is not.
        support = int(np.count_nonzero((codes != 0) != (go != 0)))
        print("numpy beta=%g threads=%s seconds=%.4f (each repeat %s) nonzero=%.3f%% maxdiff=%.3g support-mismatch=%d of %d"
              % (beta, threads, float(np.median(times)), " ".join("%.3f" % s for s in times),
                 100 * np.count_nonzero(codes) / codes.size, np.abs(codes - go).max(), support, codes.size))


if __name__ == "__main__":
    main()
