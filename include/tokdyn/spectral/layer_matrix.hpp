// The layer matrix F = O V = sum_h O_h V_h of doc/science.md section 7.1, on one rank.
#pragma once

#include <vector>

#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// F [d, d] row-major from one layer's O [d, D] and V [D, d].
std::vector<double> layer_matrix(const LayerWeights& w);
// One head's share F_h = O_h V_h [d, d] (rank d_h): O's columns and V's rows [h d_h, (h+1) d_h).
std::vector<double> head_matrix(const LayerWeights& w, int h);

}  // namespace tokdyn
