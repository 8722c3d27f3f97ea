// Package patch cuts overlapping p×p×q patches out of a multispectral cube
// into the tensor layout of package tsc, and averages reconstructed patches
// back into a cube.
//
// # Positions and indices
//
// A Grid lists every patch position of an H×W×B cube: rows y = 0, s, 2s, …
// plus always the last row H−p, columns likewise, and every band window
// b = 0..B−q (spectral step 1). The spatial step s may not exceed p, so the
// windows leave no gap and every voxel is covered at least once.
//
// Patches are numbered 0..Len()−1 with the row position slowest, then the
// band window, then the column position fastest, so the position of an index
// is found in O(1) and a batch of patches is just an index range
// [start, end). Consecutive indices slide along a row, which keeps the voxels
// that a batch reads or writes close together in memory.
//
// # Tensor layout
//
// A batch of n patches is a (p²)×n×q tproduct.Tensor: element (i, j, t) is pixel
// i (row-major within the p×p window) of patch j in band t of its window,
// stored at Data[(j*q+t)*p²+i]. Extract removes each patch's mean (DC) and
// returns it separately; Aggregator.Add puts it back.
//
// # Deterministic parallel aggregation
//
// Floating-point sums depend on the order of the terms, so an aggregate that
// is the same bit for bit whatever the number of workers needs every voxel
// to receive its terms in a fixed order. The patch indices are therefore cut
// into row stripes: stripe k holds the patches whose top row lies in
// [k·S, (k+1)·S), with S = s·⌈p/s⌉ ≥ p image rows. A patch of stripe k covers
// rows below (k+2)·S, so stripes k and k+2 never touch the same voxel:
// the even stripes (phase 0) are pairwise disjoint in the voxels they cover,
// and so are the odd ones (phase 1). Grid.ForEachBatch processes phase 0 and
// then phase 1; within a phase, workers take whole stripes and walk each in
// index order, adding straight into one shared sum with no locks. Every
// voxel then receives the terms of its even stripe in index order followed
// by those of its odd stripe in index order, whatever the number of workers
// and the batch size, so the result is bit-identical for all of them.
// (Aggregating in another order, e.g. plainly by index, gives the same
// average up to rounding but not the same bits.)
//
// # Memory
//
// An Aggregator holds one float64 sum per voxel (8·H·W·B bytes: 65 MB for a
// 512×512×31 cube), plus one float64 weight sum per voxel when weighted;
// unweighted coverage counts are computed from the grid (one count per row,
// column and band). Nothing else depends on the number of patches: the
// caller's batch tensors cost 8·p²·q·n bytes each per worker, so the memory
// of a whole pass is bounded by the cube, the sums and (batch size × number
// of workers), never by the ~7·10⁶ patches of a step-1 pass.
package patch
