// The measured Lyapunov exponents of the noise (doc/science.md section 6.3): pairs of nearby tokens under the
// random-MLP layers with attention off, one replica per pair (a ReplicaStudy), and their fitted slopes; the
// predictions they are compared with are diagnostics/lyapunov.hpp's.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/noise/mlp_kernel.hpp"
#include "tokdyn/run/replicas.hpp"

namespace tokdyn {

struct PairSimulation {
  std::int64_t replicas = 1000;
  std::int64_t layers = 1000;  // L
  double horizon = 20;         // T
  std::int64_t width = 32;     // m of the MLP
  double separation = 1e-6;    // r0
  std::uint64_t seed = 1;
};

struct PairExponents {
  std::vector<double> time;                    // [samples]
  std::vector<double> mean_log, var_log;       // E log|X-Y|, Var log|X-Y| at the sample times
  std::vector<double> log_mean_square;         // log E |X-Y|^2
  Estimate slope_mean_log, slope_var_log, slope_log_mean_square;
};

// Pairs (X, Y = LN(X + r0 xi)) through L layers X <- LN(X + sqrt(dt) G_l(X)) of fresh width-m MLPs, one
// MLP per replica and layer. The separation is renormalised to r0 after each layer and the logarithms of
// its growth are summed (the linear regime at every time): the row of a pair is that sum at layers 0..L.
class PairReplicas : public ReplicaStudy {
 public:
  PairReplicas(const Comm& comm, const MlpKernel& kernel, const PairSimulation& sim);
  // Moments at every layer and their fitted slopes (bootstrap over pairs) from the rows.
  PairExponents exponents() const;

 protected:
  void compute(std::int64_t index, double* row) override;

 private:
  MlpKernel kernel_;
  PairSimulation sim_;
};

// Every pair at once (no run file); the result is the same on any number of ranks.
PairExponents simulate_pair_exponents(MPI_Comm comm, const MlpKernel& kernel, const PairSimulation& sim);

}  // namespace tokdyn
