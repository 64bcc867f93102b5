// Counter-based random streams (Random123 Philox4x64): a draw is a pure function of
// (seed, purpose, step, index, block), so it never depends on the number of ranks or on history.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tokdyn {

// What a stream is for; every consumer has its own so streams never overlap.
// Append new purposes at the end: the numbers are part of reproducibility.
enum class Purpose : std::uint64_t {
  initial_tokens = 1,
  mlp_u = 2,        // U^l rows
  mlp_w = 3,        // W^l columns
  mlp_bias_u = 4,   // b_U^l
  mlp_bias_w = 5,   // b_W^l
  attention_q = 6,  // random Q
  attention_k = 7,  // random K
  attention_v = 8,  // random V
  brownian = 9,     // Brownian paths of the Gaussian fields
  field_u = 10,     // quenched random features: U_k, b_k
  field_z = 11,     // exact-in-law field couplings: Z
  lyapunov = 12,    // pair simulations for Lyapunov exponents
  sliced_w2 = 13,   // projection directions of the sliced 2-Wasserstein distance
  initial_density = 14,  // iid tokens from a non-uniform mu_0 (rejection sampling)
  synthetic_spectrum = 15,     // eigenvalues and upper-triangular entries of synthetic layer matrices
  synthetic_orthogonal = 16,   // Householder vectors and permutations of synthetic eigenbases
  synthetic_weights = 17,      // synthetic Q, K (and Gaussian O, V) weights
  power_tokens = 18,           // random initial tokens of the power-method runs
  eigensolver_start = 19,      // start vector of the Krylov–Schur eigen-solves (by global row)
  markov_sequences = 20,       // sampled Markov sequences (by sequence index, position)
  markov_init = 21,            // initial weights of the one-layer model (by matrix, row)
  ecd_noise = 22,              // the ECD velocity's random kicks z (by step)
  optimizer_start = 23,        // random initial velocities and momentum buffers (ECD, SGDM)
  train_batches = 24,          // the offsets of the training sequences (by step, sequence)
  train_init = 25,             // the initial GPT parameters (by tensor)
  symmetry_biases = 26,        // b_Q, b_K, b_V (by step, layer and kind)
  alignment_null = 27,         // random directions of the key-bias alignment's null
  pair_sample = 28,            // the tokens of the sampled pair statistics (by global token index)
  attention_features = 29,     // the random features of the random-features attention (by feature index)
  singular_start = 30,         // the start vector of the Lanczos top singular triplet of markov's G
  phase_tokens = 31,           // tokdyn phase: the initial tokens (by system, token)
  phase_bilinear = 32,         // tokdyn phase: the bilinear forms B = K^T Q (by draw, scope and row)
  phase_value = 33,            // tokdyn phase: the value matrices V (by draw, scope and row)
  mlmc_sample = 34,            // tokdyn mlmc: the key of each sample's noise (by level, sample)
  test = 1000,      // reserved for tests
};

// The seed of replica r of a study: a different Philox key, hence an independent set of streams.
inline std::uint64_t replica_seed(std::uint64_t seed, std::int64_t replica) {
  return seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(replica + 1);
}

class RandomStream {
 public:
  RandomStream(std::uint64_t seed, Purpose purpose) : seed_(seed), purpose_(purpose) {}

  // Four raw 64-bit words for one counter value.
  std::array<std::uint64_t, 4> bits(std::uint64_t step, std::uint64_t index, std::uint64_t block) const;
  // Four iid N(0,1) (Box-Muller on the four words).
  std::array<double, 4> normal4(std::uint64_t step, std::uint64_t index, std::uint64_t block) const;
  // out[k] = k-th normal of (step, index): word k % 4 of block k / 4. Prefix-stable in n.
  void normals(std::uint64_t step, std::uint64_t index, double* out, std::size_t n) const;
  // Four iid uniforms in (0, 1].
  std::array<double, 4> uniform4(std::uint64_t step, std::uint64_t index, std::uint64_t block) const;

 private:
  std::uint64_t seed_;
  Purpose purpose_;
};

}  // namespace tokdyn
