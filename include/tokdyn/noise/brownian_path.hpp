// Brownian paths keyed by time index, refined dyadically (Brownian bridge), so that runs with
// L = b 2^J steps for the same odd b see the same path at every shared grid time, without communication.
// Base: b independent increments of variance T/b; inside base interval i the value at the dyadic point
// o / 2^j (o odd) is the bridge midpoint plus sqrt(len / 4) Z, Z keyed by (seed, i, coordinate, j, o).
#pragma once

#include <cstdint>
#include <vector>

#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

class BrownianPath {
 public:
  // coordinates: number of independent scalar Brownian motions (modes x d).
  BrownianPath(std::uint64_t seed, std::int64_t steps, double horizon, std::int64_t coordinates);

  // out[c] = B_c(t_{l+1}) - B_c(t_l), t_l = l T / L, for every coordinate c.
  void increments(std::int64_t step, double* out) const;
  // out[s, c] = increments of steps first .. first + count - 1, count a power of two with first % count == 0
  // and count <= 2^J: the same values as increments(), by filling the bridge top-down (one normal per point
  // instead of J), for the sub-steps of a coarser step.
  void increments_block(std::int64_t first, std::int64_t count, double* out) const;
  // out[c] = B_c(t_l) (sums the base increments before l: O(b) per call; for checks and tests).
  void values(std::int64_t step, double* out) const;

  std::int64_t steps() const { return steps_; }
  std::int64_t base_steps() const { return base_; }  // b, the odd part of L
  int levels() const { return levels_; }             // J

 private:
  // B(t) - B(start of base interval) at fine point k in [0, 2^J] of base interval i, for the four
  // coordinates 4 g .. 4 g + 3.
  void offset4(std::int64_t interval, std::int64_t k, std::int64_t group, double* out4) const;

  RandomStream stream_;
  // The end of the previous step's increments is the start of the next step's: reused when steps are
  // taken in order (the values are recomputed bit for bit otherwise).
  mutable std::int64_t cached_step_ = -1;
  mutable std::vector<double> cached_end_;
  std::int64_t steps_, base_, coordinates_;
  int levels_;
  double horizon_;
};

}  // namespace tokdyn
