// The key-bias alignment of a trained model (doc/science.md section 10.5): per layer and head, the
// cosines cos(W_K e_t, b) over the vocabulary's raw token embeddings e_t (rows of wte) with the mean
// query bias b, their mean S against the null of R random directions r uniform on S^{d_h - 1} (the same
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

// [layers * heads], layer-major; direction [d_h] (not zero).
template <class T>
std::vector<HeadAlignment> key_bias_alignment(const GptConfig& c, const T* theta, const std::vector<double>& direction,
                                              int null_directions, std::uint64_t seed, int top);

}  // namespace tokdyn
