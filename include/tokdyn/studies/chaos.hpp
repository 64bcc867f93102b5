// Propagation of chaos (doc/science.md section 6.2, Prop 1.2): for each replica (its own common-noise path) the
// N-token systems, N = N0 2^j with iid tokens from mu_0, and the mean-field solution of the deck's
// meanfield.solver are driven by the same noise; their distances are recorded every few layers:
// W2 (exact on S^1, by assignment or sliced in d >= 3), MMD of e^{beta <x, y>}, and the errors of
// E_beta and of the mean token. One replica at a time, each distributed over all ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/run/replicas.hpp"

namespace tokdyn {

struct ChaosStudy {
  std::vector<std::int64_t> sizes;     // N values
  std::vector<std::int64_t> replicas;  // replica ids
  std::int64_t every = 1;              // layers between two distance evaluations (and the last)
  std::string distance = "circular";   // circular (d = 2) | assignment | sliced
  std::int64_t sliced_directions = 64;
  double beta = 1;                     // of E_beta and of the MMD kernel
  MeanFieldSpec reference;             // the mean-field solver, mu_0, the model, attention and noise
  std::string particle_style;          // attention style of the N-token systems ("": the reference's)
};

struct ChaosResult {
  std::vector<double> times;                               // [S], t = 0 first
  std::vector<double> w2, mmd2, energy_error, mean_error;  // [R, J, S]: W2^2, MMD^2, |dE_beta|, |d mean|
};

// The W2 of a study: `asked` (converge.distance) unless auto, which is circular on S^1; in d >= 3 the
// exact assignment when the reference points have equal masses, every N divides their number and no
// point count exceeds assignment_max, else sliced.
std::string chaos_distance(const MeanFieldSpec& reference, const std::string& asked, std::int64_t assignment_max,
                           const std::vector<std::int64_t>& sizes);

// The study as a distributed replica study (each replica on every rank): the row of a replica is
// [W2^2 | MMD^2 | |dE_beta| | |d mean|], each [J, S].
class ChaosReplicas : public ReplicaStudy {
 public:
  ChaosReplicas(const Comm& comm, const ChaosStudy& study);
  ChaosResult result() const;
  std::string nonfinite_message(std::int64_t step) const override;

 protected:
  void compute(std::int64_t index, double* row) override;

 private:
  ChaosStudy study_;
  std::vector<double> times_;  // [S]
};

ChaosResult run_chaos_study(const Comm& comm, const ChaosStudy& study);

// Exponents of the bound r_d(N) of E sup_t W2^2 (Prop 1.2: -1/2 for d <= 4, the log at d = 4 aside,
// -2/d above) and of the rate for uniform measures on the (d-1)-sphere (k = d - 1: 1/N for k <= 2, the
// log at k = 2 aside, N^{-2/k} above).
double chaos_bound_slope(int d);
double chaos_sharp_slope(int d);

}  // namespace tokdyn
