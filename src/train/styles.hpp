// The optimizer classes' factories (one file each), listed by src/train/optimizers.cpp. Internal.
#pragma once

#include <memory>

#include "tokdyn/train/optimizer.hpp"

namespace tokdyn {

template <class T>
std::unique_ptr<Optimizer<T>> make_ecd(const OptimizerSettings& s, std::size_t n);
template <class T>
std::unique_ptr<Optimizer<T>> make_ecd_sep(const OptimizerSettings& s, std::size_t n);
template <class T>
std::unique_ptr<Optimizer<T>> make_sgdm(const OptimizerSettings& s, std::size_t n);
template <class T>
std::unique_ptr<Optimizer<T>> make_adamw(const OptimizerSettings& s, std::size_t n);

// Defines factory NAME for the class template CLASS, for float and double (the one line each optimizer
// file ends with, like a LAMMPS style's registration).
#define TOKDYN_OPTIMIZER_FACTORY(NAME, CLASS)                                                    \
  template <class T>                                                                               \
  std::unique_ptr<Optimizer<T>> NAME(const OptimizerSettings& s, std::size_t n) {                  \
    return std::make_unique<CLASS<T>>(s, n);                                                       \
  }                                                                                                \
  template std::unique_ptr<Optimizer<float>> NAME<float>(const OptimizerSettings&, std::size_t);   \
  template std::unique_ptr<Optimizer<double>> NAME<double>(const OptimizerSettings&, std::size_t)

// sum_k a_k b_k over [begin, end), in double.
template <class T>
double dot(const T* a, const T* b, std::size_t begin, std::size_t end) {
  double s = 0;
  for (std::size_t k = begin; k < end; ++k) s += static_cast<double>(a[k]) * static_cast<double>(b[k]);
  return s;
}

}  // namespace tokdyn
