// Coupled convergence studies of doc/science.md section 6.1 (Thm 1.1), replica by replica:
//  depth: transformer layers driven by Gaussian-field increments of one Brownian path (the LN-projected
//         scheme) at L = L0 2^j against a reference solution of the SDE on the same path at L_ref steps;
//  width: the exact-in-law coupling on the N tokens, G^m(Y) = Sigma_hat^{1/2} Z + b_W against
//         G(Y) = K0^{1/2} Z + b_W with the same Z, for m = m0 2^j at fixed L.
// Replicas are spread over the ranks (each replica on one rank), so results do not depend on the rank count.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/run/replicas.hpp"

namespace tokdyn {

struct ConvergenceSetup {
  std::int64_t n = 64;
  int d = 5;
  double horizon = 1;  // T
  double factor = 1;   // attention factor (0: no attention)
  std::string attention_style = "softmax";
  AttentionWeights weights;
  int tile = 256;
  std::string field_name = "features";  // depth study
  FieldParams field;                    // its kernel is also the width study's kappa
  std::uint64_t seed = 1;
  std::vector<std::int64_t> replicas;  // replica ids covered by this run
};

struct DepthStudy {
  std::vector<std::int64_t> layers;  // L values
  std::int64_t reference_layers = 0;
  std::string reference_scheme = "heun";
};

struct WidthStudy {
  std::vector<std::int64_t> widths;  // m values
  std::int64_t layers = 64;          // L
};

// Errors (1/N) sum_i |X^i - Xbar^i|^2 per replica and level: the sup over grid times, the sup over all
// reference times of the piecewise-constant interpolation (depth; equal to the grid sup for width), and at T.
struct ConvergenceResult {
  std::vector<std::int64_t> levels, replicas;
  std::vector<double> mse_grid, mse_sup, mse_final;  // [replicas, levels]
};

// The studies as replica studies: the row of a replica is [mse_grid | mse_sup | mse_final], J levels each.
class DepthReplicas : public ReplicaStudy {
 public:
  DepthReplicas(const Comm& comm, const ConvergenceSetup& setup, const DepthStudy& study);
  ConvergenceResult result() const;

 protected:
  void compute(std::int64_t index, double* row) override;

 private:
  ConvergenceSetup setup_;
  DepthStudy study_;
};

class WidthReplicas : public ReplicaStudy {
 public:
  WidthReplicas(const Comm& comm, const ConvergenceSetup& setup, const WidthStudy& study);
  ConvergenceResult result() const;

 protected:
  void compute(std::int64_t index, double* row) override;

 private:
  ConvergenceSetup setup_;
  WidthStudy study_;
};

// Every replica at once (no run file): the library's entry points.
ConvergenceResult run_depth_study(MPI_Comm comm, const ConvergenceSetup& setup, const DepthStudy& study);
ConvergenceResult run_width_study(MPI_Comm comm, const ConvergenceSetup& setup, const WidthStudy& study);

}  // namespace tokdyn
