// Package tsc implements two-dimensional sparse coding (2DSC): third-order
// tensors approximated by sparse tensor-linear combinations of dictionary
// atoms under the t-product (circular convolution along mode 3).
//
// Conventions used throughout the package:
//
//   - Time-domain layout (Tensor): element (i, j, t) of an M×N×K tensor is
//     Data[(j*K+t)*M+i]; every lateral slice (a patch or an atom) is a
//     contiguous M×K block.
//   - DFT along mode 3: forward unnormalised, X̂_ℓ = Σ_t x_t e^{−2πiℓt/K};
//     inverse scaled by 1/K.
//   - Only the frequency slices ℓ = 0..⌊K/2⌋ are stored (FTensor), as the
//     inputs are real and X̂_{K−ℓ} = conj(X̂_ℓ). A sum over all K frequencies is
//     the weighted sum over the stored ones with Weight(ℓ, K): 1 for ℓ = 0 and
//     ℓ = K/2 (even K), 2 otherwise. Parseval: ‖X‖_F² = (1/K) Σ_ℓ w_ℓ ‖X̂^(ℓ)‖_F².
package tsc
