// The key-bias alignment of a trained model (doc/science.md section 10.6): per layer and head, the
// cosines cos(W_K e_t, b) over the vocabulary with the mean query bias b, e_t what the layer's attention
// reads for token t (its LayerNorm output, averaged over the token's places in a batch) or the raw token
// embedding (row t of wte), their mean S against the null of R random directions r uniform on S^{d_h - 1} (the same
// directions for every head, from (seed, alignment_null, r)): the null's mean and spread of S and the
// two-sided p-value, the fraction of directions whose |S_r| reaches |S|.
#pragma once

#include <cstdint>
#include <vector>

#include "tokdyn/train/gpt.hpp"

namespace tokdyn {

struct HeadAlignment {
  std::vector<double> cos;  // [V]
  double mean_cos = 0, null_mean = 0, null_std = 0, p_value = 1;
  std::vector<int> top;  // token ids by decreasing |cos| (the first `top` of them)
};

// [layers * heads], layer-major; direction [d_h] (not zero). inputs [layers, V, C]: e_t per layer, a row
// of NaN for a token not seen (its cos is NaN, left out of the means and of `top`); empty: the raw
// embeddings for every layer.
template <class T>
std::vector<HeadAlignment> key_bias_alignment(const GptConfig& c, const T* theta, const std::vector<double>& inputs,
                                              const std::vector<double>& direction, int null_directions,
                                              std::uint64_t seed, int top);

}  // namespace tokdyn
