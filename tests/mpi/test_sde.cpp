// The Ito scheme's radial drift: E|X'|^2 - 1 vanishes to O(dt^2) with it and equals (d-1) v dt without it
// (measured over many steps, tolerance 5 standard errors of the step means).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

namespace {

struct Measured {
  double mean, standard_error, variance;  // of mean_i |X'_i|^2 - 1, per step; v averaged over tokens
};

Measured radial_growth(const std::string& field_name, int d, bool radial_drift, double dt) {
  const Comm comm;
  const std::int64_t n = 400, steps = 4000;
  const Partition part(n, comm.size());
  SdeSetup s;
  s.params.n = n;
  s.params.d = d;
  s.params.steps = steps;
  s.params.horizon = dt * steps;
  s.params.radial_drift = radial_drift;
  s.n_local = part.count(comm.rank());
  s.seed = 21;
  FieldParams fp;
  fp.kernel = MlpKernel{&activation("relu"), d, 0.2, 0.1};
  fp.features = 64;
  s.field = field_styles().make(field_name, fp);
  const GaussianField& field = *s.field;
  std::vector<double> x0(s.n_local * d), x, v(s.n_local), grad(s.n_local * d);
  sample_uniform_sphere(4, part.begin(comm.rank()), s.n_local, d, x0.data());
  field.variance(x0.data(), s.n_local, v.data(), grad.data());
  double v_sum = 0;
  for (double vi : v) v_sum += vi;
  auto scheme = sde_schemes().make("euler-maruyama", s);
  double sum = 0, sum2 = 0, v_total = 0;
  MPI_Allreduce(&v_sum, &v_total, 1, MPI_DOUBLE, MPI_SUM, comm.get());
  for (std::int64_t l = 0; l < steps; ++l) {
    x = x0;  // every step starts from the same points on the sphere, with fresh increments
    scheme->step(l, x.data());
    double local = 0, total = 0;
    for (std::int64_t i = 0; i < s.n_local; ++i) {
      double r2 = 0;
      for (int a = 0; a < d; ++a) r2 += x[i * d + a] * x[i * d + a];
      local += r2 - 1;
    }
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, comm.get());
    const double m = total / n;
    sum += m, sum2 += m * m;
  }
  const double mean = sum / steps, var = sum2 / steps - mean * mean;
  return {mean, std::sqrt(var / steps), v_total / n};
}

}  // namespace

TEST(ItoScheme, RadialDriftKeepsTheNormToSecondOrder) {
  for (const char* field : {"fourier", "features"}) {
    const int d = std::string(field) == "fourier" ? 2 : 5;
    const double dt = 0.01;
    const Measured with = radial_growth(field, d, true, dt);
    const Measured without = radial_growth(field, d, false, dt);
    const double first_order = (d - 1) * without.variance * dt;  // E |P dW|^2 = (d - 1) v dt
    const double second_order = std::pow(0.5 * (d - 1) * with.variance * dt, 2);
    if (Comm().root())
      std::printf("[ measured ] %s d=%d dt=%g: E|X'|^2-1 = %.3e +- %.1e with radial drift (predicted %.1e), "
                  "%.4e +- %.1e without (predicted %.4e)\n",
                  field, d, dt, with.mean, with.standard_error, second_order, without.mean, without.standard_error,
                  first_order);
    EXPECT_NEAR(without.mean, first_order, 5 * without.standard_error) << field;
    EXPECT_NEAR(with.mean, second_order, 5 * with.standard_error) << field;
    EXPECT_LT(5 * with.standard_error, 0.2 * first_order) << field;  // the cancellation is really seen
  }
}
