#include "tokdyn/noise/random_mlp.hpp"

#include <algorithm>
#include <cmath>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/run/memory.hpp"

namespace tokdyn {
namespace {
constexpr std::int64_t kHiddenChunk = 256;  // token rows per hidden-layer chunk
}

void mlp_memory(MemoryEstimate& memory, std::int64_t width, int d) {
  memory.add("MLP weights U [m, d], W [d, m]", 2.0 * static_cast<double>(width) * d);
  memory.add("MLP hidden chunk [256, m]", double(kHiddenChunk) * static_cast<double>(width));
}

RandomMlp::RandomMlp(const MlpParams& params, int d) : params_(params), act_(&activation(params.activation)), d_(d) {
  const std::size_t m = params_.width;
  u_.resize(m * d);
  w_.resize(m * d);
  bias_u_.resize(m);
  bias_w_.resize(d);
  hidden_.resize(static_cast<std::size_t>(kHiddenChunk) * m);
}

void RandomMlp::draw(std::int64_t layer, std::uint64_t system) {
  const std::int64_t m = params_.width;
  const std::uint64_t step = static_cast<std::uint64_t>(layer), first = system * static_cast<std::uint64_t>(m);
  const RandomStream su(params_.seed, Purpose::mlp_u), sw(params_.seed, Purpose::mlp_w),
      sbu(params_.seed, Purpose::mlp_bias_u), sbw(params_.seed, Purpose::mlp_bias_w);
  std::vector<double> column(d_);
  for (std::int64_t r = 0; r < m; ++r) {
    su.normals(step, first + r, u_.data() + r * d_, d_);  // row r of U
    sw.normals(step, first + r, column.data(), d_);       // column r of W
    for (int a = 0; a < d_; ++a) w_[a * m + r] = column[a];
    bias_u_[r] = params_.sigma_u * sbu.normal4(step, first + r, 0)[0];
  }
  sbw.normals(step, system, bias_w_.data(), d_);
  for (double& b : bias_w_) b *= params_.sigma_w;
}

void RandomMlp::apply(const double* y, std::int64_t n, double* g) {
  const int m = static_cast<int>(params_.width);
  const double in_scale = 1.0 / std::sqrt(static_cast<double>(d_)), out_scale = 1.0 / std::sqrt(static_cast<double>(m));
  for (std::int64_t i0 = 0; i0 < n; i0 += kHiddenChunk) {
    const int rows = static_cast<int>(std::min(kHiddenChunk, n - i0));
    double* h = hidden_.data();  // [rows, m]
    gemm_nt(rows, m, d_, in_scale, y + i0 * d_, d_, u_.data(), d_, 0.0, h, m);  // U y / sqrt d
    for (int i = 0; i < rows; ++i) act_->row(h + static_cast<std::size_t>(i) * m, bias_u_.data(), m);
    double* gi = g + i0 * d_;  // [rows, d]
    for (int i = 0; i < rows; ++i) std::copy(bias_w_.begin(), bias_w_.end(), gi + static_cast<std::size_t>(i) * d_);
    gemm_nt(rows, d_, m, out_scale, h, m, w_.data(), m, 1.0, gi, d_);  // + W sigma(.) / sqrt m
  }
}

}  // namespace tokdyn
