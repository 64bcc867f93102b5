// The Noether charges of the rotations of each attention head (doc/science.md section 10.2): for a
// momentum P (ECD's u, SGDM's buffer, AdamW's first moment) at theta, per layer and head [d_h, d_h],
//   L_QK = (W_Q P_Q^T - P_Q W_Q^T) + (W_K P_K^T - P_K W_K^T) + (c_q p_cq^T - p_cq c_q^T) + (c_k p_ck^T - p_ck c_k^T)
//   L_VO = (W_V P_V^T - P_V W_V^T) + (c_v p_cv^T - p_cv c_v^T) + (W_O^T P_O - P_O^T W_O)
// with W_Q, W_K, W_V the head's rows [d_h, C] of the stacked projection and W_O its columns [C, d_h].
// Entry (p, q) is minus the charge <P, delta_A theta> of the generator A = e_p e_q^T - e_q e_p^T.
#pragma once

#include <vector>

#include "tokdyn/train/gpt.hpp"

namespace tokdyn {

struct HeadCharges {
  std::vector<double> qk, vo;  // [d_h, d_h], antisymmetric
};

// [layers * heads], layer-major.
template <class T>
std::vector<HeadCharges> head_charges(const GptConfig& c, const GptLayout& layout, const T* theta, const T* P);

}  // namespace tokdyn
