#include "dense_attention.hpp"

#include <cmath>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/gather.hpp"
#include "tokdyn/pairs/masses.hpp"

namespace tokdyn {

// The one registry line of the style (a built-in style has it in src/attention/styles.cpp instead).
static const bool registered = add_attention_style(
    "test-dense-softmax", "SA by plain loops over every token (a test-only style)", AttentionTraits{true, true},
    [](const AttentionContext& c) { return std::make_unique<DenseSoftmaxAttention>(c); });

DenseSoftmaxAttention::DenseSoftmaxAttention(const AttentionContext& context)
    : AttentionStyle(context, "test-dense-softmax") {
  masses_.assign(context_.partition.n_global, 1.0 / static_cast<double>(context_.partition.n_global));
}

void DenseSoftmaxAttention::set_masses(const double* masses) {
  validate_masses(context_.comm, n_local_, context_.partition.n_global, masses);
  masses_ = allgather_rows(context_.comm, context_.partition, std::vector<double>(masses, masses + n_local_), 1);
}

void DenseSoftmaxAttention::apply(const double* x, double* out) {
  const AttentionWeights& w = context_.weights;
  const int d = w.d, D = w.width(), dh = w.head_dim();
  const std::int64_t n = context_.partition.n_global;
  const std::vector<double> all =
      allgather_rows(context_.comm, context_.partition, std::vector<double>(x, x + n_local_ * d), d);  // [N, d]
  auto project = [&](const std::vector<double>& m, const double* y, int row) {  // (M y)_row, M [D, d]
    double s = 0;
    for (int b = 0; b < d; ++b) s += m[static_cast<std::size_t>(row) * d + b] * y[b];
    return s;
  };
  std::vector<double> logits(n);
  for (std::int64_t i = 0; i < n_local_; ++i) {
    const std::int64_t gi = begin_ + i;
    const std::int64_t last = context_.causal ? gi : n - 1;
    for (int h = 0; h < w.heads; ++h) {
      double m = -INFINITY;
      for (std::int64_t j = 0; j <= last; ++j) {
        double s = 0;
        for (int a = h * dh; a < (h + 1) * dh; ++a)
          s += project(w.query, &all[gi * d], a) * project(w.key, &all[j * d], a);
        logits[j] = masses_[j] > 0 ? w.beta * s + std::log(masses_[j]) : -INFINITY;
        m = std::max(m, logits[j]);
      }
      double z = 0;
      for (std::int64_t j = 0; j <= last; ++j) z += std::exp(logits[j] - m);
      for (int a = h * dh; a < (h + 1) * dh; ++a) {
        double acc = 0;
        for (std::int64_t j = 0; j <= last; ++j) acc += std::exp(logits[j] - m) * project(w.value, &all[j * d], a);
        out[i * D + a] = z > 0 ? acc / z : 0.0;  // no unmasked mass: nothing, as the built-in styles
      }
    }
  }
}

}  // namespace tokdyn
