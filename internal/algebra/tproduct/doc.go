// Package tproduct is the t-product algebra of third-order tensors that 2DSC
// is built on (docs/model.md §1): the Tensor type and its layout, the DFT
// along mode 3 (a plan, DFT, built once per tube length and reused), the
// t-product and the tensor transpose, and the Fourier-domain building
// blocks that the solver of package tsc composes — split spectra of
// lateral slices, the real embeddings of complex slice matrices
// (SliceMats) and the matrix product GemmNT (the package's own kernel, or
// OpenBLAS with the build tag openblas).
//
// Which type for what:
//
//   - Tensor: real M×N×K tensors in the time (band) domain: patches,
//     atoms, codes. Product and Transpose work on them directly.
//   - FTensor and DFT: the stored frequency slices of a tensor, for code
//     that wants the slices as complex matrices (tests, the dictionary
//     update).
//   - ForwardBlocks, InverseBlocks, SliceMats, EmbedTensor, ApplySlices:
//     the same transforms and per-slice products on "split blocks", rows
//     of reals laid out for GemmNT; the encoder's hot loop.
//
// Conventions:
//
//   - Time-domain layout: element (i, j, t) of an M×N×K tensor is
//     Data[(j*K+t)*M+i]; every lateral slice (a patch or an atom) is a
//     contiguous M×K block.
//   - DFT along mode 3: forward unnormalised, X̂_ℓ = Σ_t x_t e^{−2πiℓt/K};
//     inverse scaled by 1/K.
//   - Only the frequency slices ℓ = 0..⌊K/2⌋ are stored, as the inputs are
//     real and X̂_{K−ℓ} = conj(X̂_ℓ). A sum over all K frequencies is the
//     weighted sum over the stored ones with Weight(ℓ, K): 1 for ℓ = 0 and
//     ℓ = K/2 (even K), 2 otherwise. Parseval:
//     ‖X‖_F² = (1/K) Σ_ℓ w_ℓ ‖X̂^(ℓ)‖_F².
package tproduct
