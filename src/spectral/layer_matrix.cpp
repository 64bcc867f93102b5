#include "tokdyn/spectral/layer_matrix.hpp"

#include "tokdyn/core/numerics/blas.hpp"

namespace tokdyn {

std::vector<double> layer_matrix(const LayerWeights& w) {
  const int d = w.d, D = w.width();
  std::vector<double> f(static_cast<std::size_t>(d) * d, 0.0);
  // F [d, d] = O [d, D] V [D, d]: sum over heads in one product (head h is columns/rows [h d_h, (h+1) d_h)).
  if (D > 0) gemm_nn(d, d, D, 1.0, w.output.data(), D, w.value.data(), d, 0.0, f.data(), d);
  return f;
}

std::vector<double> head_matrix(const LayerWeights& w, int h) {
  const int d = w.d, D = w.width(), dh = w.head_dim;
  std::vector<double> f(static_cast<std::size_t>(d) * d, 0.0);
  const std::size_t at = static_cast<std::size_t>(h) * dh;
  if (dh > 0) gemm_nn(d, d, dh, 1.0, w.output.data() + at, D, w.value.data() + at * d, d, 0.0, f.data(), d);
  return f;
}

}  // namespace tokdyn
