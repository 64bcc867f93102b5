// Fast evaluation of kappa(u) on [-1, 1], for uses that need it at many points (Fourier coefficients,
// the width coupling's N x N kernel matrix, the minimisation behind lambdabar'): the ReLU closed form,
// or for smooth activations a Chebyshev interpolant (129 nodes) of a tensor Gauss-Hermite quadrature.
#pragma once

#include <vector>

#include "tokdyn/noise/mlp_kernel.hpp"

namespace tokdyn {

// Nodes and weights (summing to 1) of n-point Gauss-Hermite quadrature for E[f(Z)], Z ~ N(0, 1),
// by Golub-Welsch (LAPACK dstev on the Jacobi matrix of the probabilists' Hermite polynomials).
void gauss_hermite(int n, std::vector<double>& nodes, std::vector<double>& weights);

class KernelFunction {
 public:
  explicit KernelFunction(const MlpKernel& kernel);
  double operator()(double u) const;  // kappa(u)
  // E[sigma(V1) sigma(V2)] + sigma_W^2 by Gauss-Hermite (smooth activations), before interpolation.
  double gauss_hermite_kappa(double u) const;

 private:
  MlpKernel kernel_;
  bool relu_;
  std::vector<double> nodes_, weights_;  // Gauss-Hermite
  std::vector<double> chebyshev_;        // coefficients a_0 .. a_n
};

}  // namespace tokdyn
