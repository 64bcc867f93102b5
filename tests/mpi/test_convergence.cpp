// The coupled convergence studies at reduced sizes: the mean-square error falls like 1/L (depth, grid
// times) and like 1/m (width); fitted log-log slopes in [-1.3, -0.7]. Replicas are spread over ranks, so
// the numbers are the same at every rank count (checked against the serial run, bitwise).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/studies/convergence.hpp"

using namespace tokdyn;

namespace {

ConvergenceSetup small_setup() {
  ConvergenceSetup s;
  s.n = 16;
  s.d = 5;
  s.horizon = 1;
  s.weights = identity_attention_weights(5, 1.0);
  s.field.kernel = MlpKernel{&activation("relu"), 5, 0.0, 0.0};
  s.field.features = 256;
  s.seed = 3;
  for (int r = 0; r < 8; ++r) s.replicas.push_back(r);
  return s;
}

double slope_of_mean(const ConvergenceResult& r, const std::vector<double>& mse) {
  const std::size_t J = r.levels.size(), R = r.replicas.size();
  std::vector<double> lx, ly;
  for (std::size_t j = 0; j < J; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < R; ++i) s += mse[i * J + j];
    lx.push_back(std::log(static_cast<double>(r.levels[j])));
    ly.push_back(std::log(s / R));
  }
  return least_squares_slope(lx, ly);
}

}  // namespace

TEST(Convergence, DepthStudyMeanSquareErrorFallsLikeOneOverL) {
  const Comm comm;
  DepthStudy d;
  d.layers = {8, 16, 32, 64};
  d.reference_layers = 512;
  const ConvergenceSetup s = small_setup();
  const ConvergenceResult r = run_depth_study(comm.get(), s, d);
  const double grid = slope_of_mean(r, r.mse_grid), sup = slope_of_mean(r, r.mse_sup);
  if (comm.root()) std::printf("[ measured ] depth slopes: grid %.3f, sup %.3f\n", grid, sup);
  EXPECT_GE(grid, -1.3);
  EXPECT_LE(grid, -0.7);
  EXPECT_GE(sup, -1.3);  // log L / L: slightly shallower than -1
  EXPECT_LE(sup, -0.6);
  const ConvergenceResult serial = run_depth_study(MPI_COMM_SELF, s, d);
  EXPECT_EQ(r.mse_grid, serial.mse_grid);
  EXPECT_EQ(r.mse_sup, serial.mse_sup);
}

TEST(Convergence, WidthStudyMeanSquareErrorFallsLikeOneOverM) {
  const Comm comm;
  WidthStudy w;
  w.widths = {16, 32, 64, 128};
  w.layers = 32;
  const ConvergenceSetup s = small_setup();
  const ConvergenceResult r = run_width_study(comm.get(), s, w);
  const double slope = slope_of_mean(r, r.mse_grid);
  if (comm.root()) std::printf("[ measured ] width slope %.3f\n", slope);
  EXPECT_GE(slope, -1.3);
  EXPECT_LE(slope, -0.7);
  const ConvergenceResult serial = run_width_study(MPI_COMM_SELF, s, w);
  EXPECT_EQ(r.mse_final, serial.mse_final);
}
