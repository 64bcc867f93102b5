// Lagrangian solver of the mean-field SPDE on any S^{d-1}: mu_t = sum_j w_j delta_{X^j_t} with the
// quadrature points of mu_0 (equispaced, Fibonacci or low-discrepancy points, masses proportional to the
// initial density) moved by the McKean-Vlasov dynamics: the particle SDE with weighted attention, driven
// by the common noise (the SPDE maps weighted empirical measures to weighted empirical measures).
// Stratonovich Heun with 2^q steps per layer, on the Brownian path of L 2^q steps (shared with the grid).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/dynamics/sde.hpp"

namespace tokdyn {

// The quadrature of mu_0 on this rank's slice of the partition of n points: the points of
// quadrature_points and masses proportional to the density relative to uniform, summing to 1.
void quadrature_rule(const InitialDensity& initial, int d, const Partition& partition, int rank, std::vector<double>& x,
                     std::vector<double>& masses);

// The McKean-Vlasov scheme of n points on comm: 2^refinement Stratonovich Heun steps per layer, the
// spec's attention over the partition of n (or the given style), its field and noise seed.
SdeSetup mckean_vlasov_setup(const MeanFieldSetup& setup, std::int64_t n, const std::string& attention_style = "");

class QuadratureSolver final : public MeanFieldSolver {
 public:
  // setup.params.steps = L 2^q (scheme steps); the scheme is built from setup (attention masses set here).
  // x: this rank's points [n_local, d] of the partition of setup.params.n; masses: theirs [n_local].
  QuadratureSolver(MPI_Comm comm, SdeSetup setup, int refinement, std::vector<double> x, std::vector<double> masses,
                   int tile);

  void step(std::int64_t layer) override;
  MeanFieldObservables observe(double beta) override;
  bool finite() override;
  void gather_measure(std::vector<double>& points, std::vector<double>& masses) override;
  std::int64_t state_rows() const override { return partition_.n_global; }
  int state_width() const override { return d_; }
  std::vector<double> state() const override { return x_; }
  void restore(const std::vector<double>& rows, std::int64_t counter) override;
  void resume_snapshots(RunGroup group) override;
  void write_snapshot(RunGroup group, std::uint64_t row) override;
  std::int64_t size() const override { return partition_.n_global; }
  std::string size_unit() const override { return "points"; }

  const std::vector<double>& points() const { return x_; }    // this rank's [n_local, d]
  const std::vector<double>& masses() const { return w_; }    // this rank's [n_local]
  std::int64_t first_point() const;

 private:
  MPI_Comm comm_;
  Partition partition_;
  int d_, rank_ = 0, refinement_, tile_ = 256;
  std::vector<double> x_, w_;  // [n_local, d], [n_local]
  std::unique_ptr<SdeScheme> scheme_;
  std::optional<PairStatisticsPass> statistics_;  // d > 2: the weighted O(N^2) energy, for statistics_beta_
  double statistics_beta_ = 0;
  bool snapshots_begun_ = false;  // /meanfield/masses written, /meanfield/points has rows
};

}  // namespace tokdyn
