// Package tsc solves two-dimensional sparse coding (2DSC, docs/model.md
// §2–§5): patches approximated by sparse tensor-linear combinations of
// dictionary atoms under the t-product of package tproduct, and the learning
// of those atoms.
//
// Which type for what:
//
//   - Encoder: the codes of patches for a fixed dictionary (FISTA with the
//     exact Lipschitz constant, §3). Build it once per dictionary; Encode
//     codes one batch with a Workspace, and batches may be coded on several
//     goroutines, each with its own Workspace.
//   - Learn: the dictionary from training patches (§5), with LearnOptions:
//     it alternates coding all patches on several goroutines,
//     bit-identically for any number of them, with the dictionary step for
//     fixed codes (the Lagrange dual in the Fourier domain, §4).
//
// A learned dictionary is stored with what is needed to reproduce it by
// package dictfile.
//
// Tensors are package tproduct's, with its layout and DFT conventions.
package tsc
