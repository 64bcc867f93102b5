// The layer matrix F = O V = sum_h O_h V_h of doc/science.md section 7.1, on one rank.
#pragma once

#include <vector>

#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// F [d, d] row-major from one layer's O [d, D] and V [D, d].
std::vector<double> layer_matrix(const LayerWeights& w);

}  // namespace tokdyn
