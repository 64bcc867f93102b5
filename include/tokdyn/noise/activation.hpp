// MLP activations sigma (Lipschitz, non-polynomial) with their derivatives, by name.
#pragma once

#include <string>
#include <vector>

namespace tokdyn {

struct Activation {
  const char* name;
  double (*value)(double);
  double (*derivative)(double);
  // h [m] <- sigma(h + bias) over a row: one loop with sigma inlined (no call per element), the same bits
  // as value() entry by entry.
  void (*row)(double* h, const double* bias, int m);
  // Where sigma or sigma' is not smooth (quadrature breakpoints): relu at 0, none for the others.
  bool kink_at_zero;
};

const Activation& activation(const std::string& name);  // InputError for an unknown name
std::vector<std::string> activation_names();

}  // namespace tokdyn
