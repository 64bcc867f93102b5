#include "tokdyn/diagnostics/lyapunov.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

double synchronization_rate_f(const KernelFunction& kappa, double kappa1, int d, double beta, double u) {
  const double ku = kappa(u), w = 1 - u * u;
  const double g = ku * (d - 2 + u * u - beta * u * w) + kappa1 * (beta * w - (d - 1) * u);
  // e^beta - e^{beta u} = -e^beta expm1(beta (u - 1)): accurate near u = 1.
  return beta * std::exp(beta * u) * g / (-std::exp(beta) * std::expm1(beta * (u - 1)));
}

LyapunovPrediction predict_lyapunov(const MlpKernel& kernel, double beta) {
  LyapunovPrediction p;
  const int d = kernel.d;
  p.kappa1 = kernel.kappa(1.0);
  p.kappa_prime1 = kernel.kappa_prime(1.0);
  p.lambda1 = 0.5 * (d - 3) * p.kappa_prime1 - 0.5 * (d - 1) * p.kappa1;
  p.lambdabar = (d - 1) * p.kappa_prime1 - (d - 3) * p.kappa1;
  p.var_rate = p.kappa1 + p.kappa_prime1;
  // inf of F on [-1, 1): a grid, golden-section refinement around its best point, and the limit
  // F(1-) = -lambdabar (F itself is 0/0 at u = 1).
  const KernelFunction kappa(kernel);
  const int n = 4000;
  const double top = 1 - 1e-6;
  double best = -p.lambdabar, best_u = 1.0;
  int best_j = -1;
  for (int j = 0; j <= n; ++j) {
    const double u = -1 + (top + 1) * j / n, f = synchronization_rate_f(kappa, p.kappa1, d, beta, u);
    if (f < best) best = f, best_u = u, best_j = j;
  }
  if (best_j >= 0) {
    double a = -1 + (top + 1) * std::max(0, best_j - 1) / n, b = -1 + (top + 1) * std::min(n, best_j + 1) / n;
    const double phi = 0.5 * (std::sqrt(5.0) - 1);
    for (int it = 0; it < 80; ++it) {
      const double c = b - phi * (b - a), e = a + phi * (b - a);
      if (synchronization_rate_f(kappa, p.kappa1, d, beta, c) < synchronization_rate_f(kappa, p.kappa1, d, beta, e))
        b = e;
      else
        a = c;
    }
    const double u = 0.5 * (a + b), f = synchronization_rate_f(kappa, p.kappa1, d, beta, u);
    if (f < best) best = f, best_u = u;
  }
  p.lambdabar_prime = -best;
  p.argmin_u = best_u;
  return p;
}

}  // namespace tokdyn
