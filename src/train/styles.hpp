// The built-in optimizers (one file each), listed by src/train/optimizers.cpp. Internal.
#pragma once

#include <cstddef>

#include "tokdyn/train/optimizer.hpp"

namespace tokdyn {

// Each adds its optimizer (add_optimizer_class) with its name and help.
void add_ecd(OptimizerRegistry& registry);
void add_ecd_sep(OptimizerRegistry& registry);
void add_sgdm(OptimizerRegistry& registry);
void add_adamw(OptimizerRegistry& registry);

// sum_k a_k b_k over [begin, end), in double.
template <class T>
double dot(const T* a, const T* b, std::size_t begin, std::size_t end) {
  double s = 0;
  for (std::size_t k = begin; k < end; ++k) s += static_cast<double>(a[k]) * static_cast<double>(b[k]);
  return s;
}

}  // namespace tokdyn
