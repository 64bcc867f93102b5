#include "tokdyn/noise/brownian_path.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace tokdyn {

BrownianPath::BrownianPath(std::uint64_t seed, std::int64_t steps, double horizon, std::int64_t coordinates)
    : stream_(seed, Purpose::brownian), steps_(steps), coordinates_(coordinates), horizon_(horizon) {
  base_ = steps;
  levels_ = 0;
  while (base_ % 2 == 0) base_ /= 2, ++levels_;
}

void BrownianPath::offset4(std::int64_t interval, std::int64_t k, std::int64_t group, double* out) const {
  const std::int64_t fine = std::int64_t(1) << levels_;
  if (k == 0) {
    std::fill(out, out + 4, 0.0);
    return;
  }
  double len = horizon_ / static_cast<double>(base_);  // time length of the current interval
  const auto z0 = stream_.normal4(static_cast<std::uint64_t>(interval), group, 0);
  double lo[4] = {0, 0, 0, 0}, hi[4];
  for (int c = 0; c < 4; ++c) hi[c] = std::sqrt(len) * z0[c];
  std::int64_t a = 0, b = fine;  // the current interval [a, b] in fine units
  for (int j = 1; k != b; ++j) {
    // Midpoint at level j: o / 2^j of the base interval with o odd, independent of J.
    const std::int64_t mid = (a + b) / 2, odd = mid >> (levels_ - j);
    const auto z = stream_.normal4(static_cast<std::uint64_t>(interval), group, (std::uint64_t(1) << j) | odd);
    const double s = std::sqrt(len / 4);
    double m[4];
    for (int c = 0; c < 4; ++c) m[c] = 0.5 * (lo[c] + hi[c]) + s * z[c];
    len /= 2;
    if (k < mid) {
      b = mid;
      std::copy(m, m + 4, hi);
    } else {
      a = mid;
      std::copy(m, m + 4, lo);
      if (k == mid) break;
    }
  }
  std::copy(k == a ? lo : hi, (k == a ? lo : hi) + 4, out);
}

void BrownianPath::increments(std::int64_t step, double* out) const {
  const std::int64_t fine = std::int64_t(1) << levels_;
  const std::int64_t interval = step / fine, k = step % fine;
  const std::int64_t groups = (coordinates_ + 3) / 4;
  // Offsets are relative to the start of the base interval: reuse the previous end inside one interval.
  const bool reuse = (step == cached_step_ + 1) && k != 0;
  cached_end_.resize(4 * groups);
  double before[4], after[4];
  for (std::int64_t g = 0; g < groups; ++g) {
    if (reuse)
      std::copy(cached_end_.begin() + 4 * g, cached_end_.begin() + 4 * g + 4, before);
    else
      offset4(interval, k, g, before);
    offset4(interval, k + 1, g, after);
    std::copy(after, after + 4, cached_end_.begin() + 4 * g);
    for (int c = 0; c < 4 && 4 * g + c < coordinates_; ++c) out[4 * g + c] = after[c] - before[c];
  }
  cached_step_ = step;
}

void BrownianPath::increments_block(std::int64_t first, std::int64_t count, double* out) const {
  const std::int64_t fine = std::int64_t(1) << levels_;
  if (count < 1 || (count & (count - 1)) != 0 || first % count != 0 || count > fine)
    throw std::invalid_argument("BrownianPath::increments_block: count must be a power of two dividing first and 2^J");
  const std::int64_t interval = first / fine, k0 = first % fine;
  const std::int64_t groups = (coordinates_ + 3) / 4;
  std::vector<double> v((count + 1) * 4);  // [count + 1, 4] offsets at fine points k0 .. k0 + count
  for (std::int64_t g = 0; g < groups; ++g) {
    offset4(interval, k0, g, v.data());
    offset4(interval, k0 + count, g, v.data() + 4 * count);
    // Midpoints level by level, with the arithmetic of offset4 (same keys, same len, same midpoint formula),
    // hence the same bits.
    for (std::int64_t half = count / 2; half >= 1; half /= 2) {
      int lj = levels_;  // the level j of midpoints at odd multiples of `half`: fine / 2^j = half
      for (std::int64_t h = half; h > 1; h /= 2) --lj;
      double len = horizon_ / static_cast<double>(base_);  // length of the level-(j-1) intervals, as offset4
      for (int i = 1; i < lj; ++i) len /= 2;
      const double s = std::sqrt(len / 4);
      for (std::int64_t p = half; p < count; p += 2 * half) {
        const std::int64_t odd = (k0 + p) >> (levels_ - lj);
        const auto z = stream_.normal4(static_cast<std::uint64_t>(interval), g, (std::uint64_t(1) << lj) | odd);
        for (int c = 0; c < 4; ++c) v[4 * p + c] = 0.5 * (v[4 * (p - half) + c] + v[4 * (p + half) + c]) + s * z[c];
      }
    }
    for (std::int64_t t = 0; t < count; ++t)
      for (int c = 0; c < 4 && 4 * g + c < coordinates_; ++c)
        out[t * coordinates_ + 4 * g + c] = v[4 * (t + 1) + c] - v[4 * t + c];
  }
}

void BrownianPath::values(std::int64_t step, double* out) const {
  const std::int64_t fine = std::int64_t(1) << levels_;
  const std::int64_t interval = std::min(step / fine, base_ - 1), k = step - interval * fine;
  std::fill(out, out + coordinates_, 0.0);
  double v[4];
  for (std::int64_t g = 0; 4 * g < coordinates_; ++g) {
    for (std::int64_t i = 0; i < interval; ++i) {
      offset4(i, fine, g, v);
      for (int c = 0; c < 4 && 4 * g + c < coordinates_; ++c) out[4 * g + c] += v[c];
    }
    offset4(interval, k, g, v);
    for (int c = 0; c < 4 && 4 * g + c < coordinates_; ++c) out[4 * g + c] += v[c];
  }
}

}  // namespace tokdyn
