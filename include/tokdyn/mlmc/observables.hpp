// The observables phi(X) of the tokens whose expectation tokdyn mlmc estimates (doc/science.md section 11.3), one
// class per name (mlmc.observable):
//   order2   |(1/N) sum_i x_i|^2 = (1/N^2) sum_ij <x_i, x_j>, every ordered pair, i = j included
//   energy   E_beta = (1/(2N^2)) sum_ij (e^beta - e^{beta <x_i, x_j>})   (section 5.1)
//   cosine   the mean cosine over the pairs i != j
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tokdyn/core/deck/registry.hpp"

namespace tokdyn {

class TokenObservable {
 public:
  virtual ~TokenObservable() = default;
  // phi of the tokens x [n, d] (unit rows): plain loops, one system on one rank.
  virtual double operator()(const double* x, std::int64_t n, int d) const = 0;
};

// The factories take beta (the energy's; attention.beta).
using ObservableRegistry = Registry<TokenObservable, double>;
const ObservableRegistry& token_observables();

}  // namespace tokdyn
