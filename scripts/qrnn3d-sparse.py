#!/usr/bin/python3
"""Write the sparse part of the QRNN3D cases that mixed_cases.py wrote.

    python3 scripts/qrnn3d-sparse.py DIR NAME [--seed 1]

mixed_cases.py (in the shared peers folder) writes DIR/NAME_clean.hdr and
DIR/NAME_c1.hdr … NAME_c5.hdr, the noisy cubes y = x + n + s. Its
generator is numpy's PCG64 seeded with (seed, case), which first draws
every band's σ (integers(0, 4, size=B) indexing 10, 30, 50, 70) and then the
Gaussian part (standard_normal of shape H×W×B). Drawing the same here
gives n exactly, and so s = y − x − n: written as DIR/NAME_c<k>_sparse.hdr
(float32 BSQ ENVI), it is the truth that the sparse-noise detector is
measured against (a stripe is a column of one nonzero value, a dead column
is all 0 in y, any other nonzero s an impulse). The float32 rounding of y
and x leaves |s| below about 1e-4 elsewhere.
"""
import argparse, os
import numpy as np

SIGMAS = np.array([10.0, 30.0, 50.0, 70.0])


def read_envi(hdr):
    fields = {}
    for line in open(hdr):
        if '=' in line:
            k, v = line.split('=', 1)
            fields[k.strip()] = v.strip()
    h, w, b = int(fields['lines']), int(fields['samples']), int(fields['bands'])
    if fields['data type'] != '4' or fields['interleave'] != 'bsq':
        raise SystemExit(f'{hdr}: expected float32 BSQ')
    return np.fromfile(hdr[:-4] + '.img', dtype='<f4').reshape(b, h, w).astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dir')
    ap.add_argument('name')
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    clean = read_envi(os.path.join(a.dir, f'{a.name}_clean.hdr'))
    bands, h, w = clean.shape
    for k in range(1, 6):
        noisy = read_envi(os.path.join(a.dir, f'{a.name}_c{k}.hdr'))
        rng = np.random.default_rng([a.seed, k])
        sigma = SIGMAS[rng.integers(0, len(SIGMAS), size=bands)]
        gauss = sigma[None, None, :] * rng.standard_normal((h, w, bands))
        sparse = noisy - clean - np.transpose(gauss, (2, 0, 1))
        base = os.path.join(a.dir, f'{a.name}_c{k}_sparse')
        sparse.astype('<f4').tofile(base + '.img')
        with open(base + '.hdr', 'w') as f:
            f.write('ENVI\n'
                    f'description = {{sparse part of {a.name} case {k}, seed {a.seed}}}\n'
                    f'samples = {w}\nlines = {h}\nbands = {bands}\n'
                    'header offset = 0\nfile type = ENVI Standard\ndata type = 4\n'
                    'interleave = bsq\nbyte order = 0\n')
        print(f'wrote {base}.hdr')


if __name__ == '__main__':
    main()
