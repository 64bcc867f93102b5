// Lyapunov exponents of the noise (doc/science.md section 6.3): their predictions from the kernel constants (the
// measured exponents of pairs of nearby tokens are a study's: studies/pair_replicas.hpp).
#pragma once

#include "tokdyn/noise/kernel_function.hpp"

namespace tokdyn {

struct LyapunovPrediction {
  double kappa1 = 0, kappa_prime1 = 0;
  double lambda1 = 0;          // (d-3)/2 kappa'(1) - (d-1)/2 kappa(1)
  double lambdabar = 0;        // (d-1) kappa'(1) - (d-3) kappa(1)
  double lambdabar_prime = 0;  // -inf_{u in [-1,1)} F(u)
  double argmin_u = 0;         // where F attains its infimum (1 when the limit F(1-) = -lambdabar wins)
  double var_rate = 0;         // kappa(1) + kappa'(1): growth rate of Var log|X - Y|
};

// F(u) = beta e^{beta u} G(u) / (e^beta - e^{beta u}),
// G(u) = kappa(u)(d - 2 + u^2 - beta u (1 - u^2)) + kappa(1)(beta (1 - u^2) - (d - 1) u).
double synchronization_rate_f(const KernelFunction& kappa, double kappa1, int d, double beta, double u);
LyapunovPrediction predict_lyapunov(const MlpKernel& kernel, double beta);

}  // namespace tokdyn
