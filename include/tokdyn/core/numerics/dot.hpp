// The dot product of two long vectors (an optimizer's flat parameters, a gradient's norm) in double, in a fixed
// order that vectorises.
#pragma once

#include <cstddef>

#include "tokdyn/core/numerics/vector_clones.hpp"

namespace tokdyn {

// sum_k a_k b_k over [begin, end), in double: eight partial sums (term k into sum (k - begin) mod 8), added
// pairwise at the end. The order is fixed, so every machine and vector width gives the same bits, and the
// loop vectorises (one running sum would chain every add on the one before).
template <class A, class B>
TOKDYN_VECTOR_CLONES double dot(const A* a, const B* b, std::size_t begin, std::size_t end) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t k = begin;
  for (; k + 8 <= end; k += 8)
    for (int j = 0; j < 8; ++j) s[j] += static_cast<double>(a[k + j]) * static_cast<double>(b[k + j]);
  for (int j = 0; k < end; ++k, ++j) s[j] += static_cast<double>(a[k]) * static_cast<double>(b[k]);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

}  // namespace tokdyn
