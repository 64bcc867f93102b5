// Covariance kernel of the random MLP field (doc/science.md section 2): E[G(x) G(y)^T] = kappa(<x,y>) I_d with
// kappa(u) = E[sigma(V1) sigma(V2)] + sigma_W^2, Var V = 1/d + sigma_U^2, Cov = u/d + sigma_U^2.
// Computed by composite Gauss-Legendre quadrature against the Gaussian density (breakpoints at kinks),
// with the ReLU arc-cosine closed form beside it.
#pragma once

#include "tokdyn/noise/activation.hpp"

namespace tokdyn {

struct MlpKernel {
  const Activation* act;
  int d;
  double sigma_u = 0, sigma_w = 0;

  double variance() const { return 1.0 / d + sigma_u * sigma_u; }  // s^2
  double kappa(double u) const;        // by quadrature
  double kappa_prime(double u) const;  // d kappa / du = (1/d) E[sigma'(V1) sigma'(V2)]
};

// ReLU closed forms (arc-cosine kernel).
double relu_kappa(int d, double sigma_u, double sigma_w, double u);
double relu_kappa_prime(int d, double sigma_u, double u);

}  // namespace tokdyn
