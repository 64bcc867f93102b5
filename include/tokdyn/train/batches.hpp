// The data of tokdyn train (doc/science.md section 10.4): a tokenised text split by position into a
// training and a validation part, sequences of n + 1 consecutive tokens (inputs and next-token targets)
// at offsets drawn from the counter-based stream (seed, train_batches, step, sequence), and the
// data-parallel loss and gradient of a batch: each rank takes its block of the batch's sequences, sums
// their gradients in double, and one all-reduce gives every rank the mean.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tokdyn/markov/sequences.hpp"
#include "tokdyn/train/gpt.hpp"

namespace tokdyn {

struct TextSplit {
  std::vector<int> train, validation;  // token ids; validation = the last fraction of the text
};
// InputError when either part is shorter than n + 1 tokens.
TextSplit split_text(const TokenizedText& text, double validation_fraction, int n);

// The offset of sequence b of step k in a part of `size` tokens: uniform in [0, size - n - 1].
std::int64_t sequence_offset(std::uint64_t seed, std::int64_t step, std::int64_t b, std::int64_t size, int n);

// The offsets [B] of step k's batch (sequence_offset of b = 0..B-1).
std::vector<std::int64_t> batch_offsets(std::uint64_t seed, std::int64_t step, std::int64_t batch, std::int64_t size,
                                        int n);
// The validation sequences: `count` offsets spaced evenly over [0, size - n - 1] (the first and last
// sequences of the part included), the same whatever the seed, so runs of different seeds share them.
std::vector<std::int64_t> validation_offsets(std::int64_t count, std::int64_t size, int n);

// Collective: the mean next-token cross-entropy over the B x n positions of the sequences at `offsets` [B]
// in `tokens` (spread over the ranks in blocks) and, when grad [size] is not null, its gradient (the same
// on every rank).
template <class T>
double batch_loss(Gpt<T>& model, const T* theta, const std::vector<int>& tokens,
                  const std::vector<std::int64_t>& offsets, int n, const SymmetryBiases& biases, T* grad,
                  MPI_Comm comm);

// Collective: per layer and token id, what the layer's attention reads for that token (LN_1 of the block's
// input), averaged over the token's places in the sequences at `offsets` [B] of `tokens` [L, V, C]; a row
// of NaN for a token that does not occur there. The same on every rank.
template <class T>
std::vector<double> mean_attention_inputs(Gpt<T>& model, const T* theta, const std::vector<int>& tokens,
                                          const std::vector<std::int64_t>& offsets, int n, const SymmetryBiases& biases,
                                          MPI_Comm comm);

}  // namespace tokdyn
