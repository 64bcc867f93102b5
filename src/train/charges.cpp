#include "tokdyn/train/charges.hpp"

namespace tokdyn {
namespace {

// L [D, D] += X Y^T - Y X^T for X, Y [D, cols] whose row e starts at x + e * row_stride (+ k * col_stride).
template <class T>
void add_rotation(const T* x, const T* y, int D, int cols, std::size_t row_stride, std::size_t col_stride, double* L) {
  for (int p = 0; p < D; ++p)
    for (int q = 0; q < D; ++q) {
      double s = 0;
      for (int k = 0; k < cols; ++k) {
        const std::size_t ip = p * row_stride + k * col_stride, iq = q * row_stride + k * col_stride;
        s += static_cast<double>(x[ip]) * y[iq] - static_cast<double>(y[ip]) * x[iq];
      }
      L[p * D + q] += s;
    }
}

}  // namespace

template <class T>
std::vector<HeadCharges> head_charges(const GptConfig& c, const GptLayout& layout, const T* theta, const T* P) {
  const int C = c.channels, D = c.head_dim();
  std::vector<HeadCharges> out;
  for (int l = 0; l < c.layers; ++l) {
    const GptLayout::Layer& w = layout.layer[l];
    for (int h = 0; h < c.heads; ++h) {
      HeadCharges ch{std::vector<double>(static_cast<std::size_t>(D) * D, 0.0),
                     std::vector<double>(static_cast<std::size_t>(D) * D, 0.0)};
      const std::size_t rows = static_cast<std::size_t>(h) * D;
      for (int part = 0; part < 2; ++part) {  // Q, K: rows of W_qkv and entries of its bias
        const std::size_t wq = w.qkvw + (static_cast<std::size_t>(part) * C + rows) * C;
        const std::size_t bq = w.qkvb + static_cast<std::size_t>(part) * C + rows;
        add_rotation(theta + wq, P + wq, D, C, C, 1, ch.qk.data());
        add_rotation(theta + bq, P + bq, D, 1, 1, 1, ch.qk.data());
      }
      const std::size_t wv = w.qkvw + (2 * static_cast<std::size_t>(C) + rows) * C, bv = w.qkvb + 2 * C + rows;
      add_rotation(theta + wv, P + wv, D, C, C, 1, ch.vo.data());
      add_rotation(theta + bv, P + bv, D, 1, 1, 1, ch.vo.data());
      // W_O^T P_O - P_O^T W_O: the head's columns of W_O [C, C], column e at w.projw + rows + e.
      add_rotation(theta + w.projw + rows, P + w.projw + rows, D, C, 1, C, ch.vo.data());
      out.push_back(std::move(ch));
    }
  }
  return out;
}

template std::vector<HeadCharges> head_charges<float>(const GptConfig&, const GptLayout&, const float*, const float*);
template std::vector<HeadCharges> head_charges<double>(const GptConfig&, const GptLayout&, const double*,
                                                       const double*);

}  // namespace tokdyn
