// Long sums in double in a fixed order that vectorises: eight partial sums (term i into sum i mod 8), added
// pairwise at the end. The order is fixed, so every machine and vector width gives the same bits (one running
// sum would chain every add on the one before and stay scalar).
#pragma once

#include <cstddef>

#include "tokdyn/core/numerics/vector_clones.hpp"

namespace tokdyn {

// sum_i term(i) over i < count. Inlined into its caller's vector clone (TOKDYN_VECTOR_CLONES).
template <class F>
[[gnu::always_inline]] inline double lane_sum(std::size_t count, F term) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (std::size_t j = 0; j < 8; ++j) s[j] += term(i + j);
  for (std::size_t j = 0; i < count; ++i, ++j) s[j] += term(i);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// sum_k a_k b_k over [begin, end) of two long vectors (an optimizer's flat parameters, a gradient's norm).
template <class A, class B>
TOKDYN_VECTOR_CLONES double dot(const A* a, const B* b, std::size_t begin, std::size_t end) {
  return lane_sum(end - begin, [a, b, begin](std::size_t k) {
    return static_cast<double>(a[begin + k]) * static_cast<double>(b[begin + k]);
  });
}

}  // namespace tokdyn
