// tokdyn phase: many independent systems of n tokens on S^{d-1}, one per (beta, system) pair, each under the
// self-attention dynamics of the phase diagrams of doc/science.md section 6.7 (row vectors, as there):
//   x_i <- LN( x_i + h (sum_j A_ij x_j) V ),  A_ij = e^{beta x_i B x_j^T} / Z_i,
// Z_i = sum_k e^{beta x_i B x_k^T} (SA) or n (USA); B = K^T Q and V identity or drawn at random per system, per
// beta or once per run, and drawn again every regen_period of time; optionally each step is followed by the
// random-MLP sub-step of section 1.2, x_i <- LN(x_i + sqrt(h) G_k(x_i)), with an MLP G_k of its own for every
// system k and step (the peers' diagrams have no noise). A rank holds a contiguous block of the
// systems and advances all of them by one record interval per step; the statistics of each system are gathered
// on every rank in global order, so every number is the same at any rank count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/state.hpp"

namespace tokdyn {

struct PhaseParams {
  std::int64_t tokens = 32;  // n per system
  int d = 2;
  double horizon = 30;       // T
  std::int64_t records = 100;  // record times t_r = r T / records, r = 0..records
  std::vector<double> betas;     // this run's betas: a block of the grid
  std::int64_t beta_offset = 0;  // the grid index of betas[0]: the draws are keyed by grid index, so a block's
                                 // numbers equal those of the same betas in the whole grid's run
  std::int64_t systems = 2048;  // per beta
  double step = 0.1;            // the largest time step (SA; USA: divided by max(sqrt(beta) e^{beta - 1/2}, 1))
  bool softmax = true;          // SA; false: USA
  bool raw_step = false;        // USA: the step as given
  std::string bilinear = "identity";  // identity | gaussian | goe
  std::string value = "identity";     // identity | gaussian | plus-b | minus-b
  std::string scope = "system";       // system | beta | run: what a draw of B and V is shared by
  double regen_period = 0;            // > 0: new B and V every regen_period of time
  double density_cosine = 0.999;      // a pair i != j is "at zero distance" above this cosine
  double cluster_cosine = 0.9999;     // tokens joined into one cluster above this cosine
  double span_eigenvalue = 1e-3;      // eigenvalues of X^T X counted in the span's dimension above this
  std::uint64_t seed = 1;
  bool mlp = false;   // the random-MLP sub-step after each step
  MlpParams mlp_params;
};

// The time step of beta (the USA rule unless raw_step) and the sub-steps per record interval: the step actually
// taken is interval / steps_per_record <= that step, so every record time is reached exactly.
double phase_step(const PhaseParams& p, double beta);
std::int64_t phase_steps_per_record(const PhaseParams& p, double beta);

// B and V [d, d] of draw `draw` for scope key `key` (the global system, the beta index or 0).
void phase_matrices(const PhaseParams& p, std::uint64_t draw, std::uint64_t key, double* bilinear, double* value);

// One step of one system with step h: x [n, d] in place; b, v [d, d] (null: identity); work: scratch.
void phase_system_step(const PhaseParams& p, double beta, double h, const double* b, const double* v, double* x,
                       std::vector<double>& work);

// The random-MLP sub-step of system `system` (its grid-wide index) after its step number `layer` (1, 2, ...):
// x_i <- LN(x_i + sqrt(h) G(x_i)) with G that system's MLP of that step; x [n, d] in place, g: scratch.
void phase_mlp_step(RandomMlp& mlp, std::uint64_t system, std::int64_t layer, double h, double* x, std::int64_t n,
                    int d, std::vector<double>& g);

// The statistics of one system x [n, d]: its fraction of ordered pairs i != j above density_cosine, its clusters
// (connected components of the graph of pairs above cluster_cosine), the dimension of its span and E_beta.
struct SystemStatistics {
  double density = 0, clusters = 0, span = 0, energy = 0;
};
SystemStatistics phase_system_statistics(const PhaseParams& p, double beta, const double* x, std::vector<double>& work,
                                         std::vector<int>& parent);

// The statistics over the systems of every beta at one record time, [betas] each.
struct PhaseRecord {
  std::vector<double> density, density_stderr, clusters_median, clusters_mean, span, energy, energy_stderr;
};

class PhaseSystems : public RunState {
 public:
  PhaseSystems(const Comm& comm, const PhaseParams& params);

  std::int64_t steps() const override { return params_.records; }
  std::string unit() const override { return "record"; }
  void start() override;
  void begin(RunFile& file) override;
  std::int64_t advance(std::int64_t record) override;
  std::string observe(std::int64_t record, RunFile& file) override;
  std::string record_line() const override { return line_; }
  bool finite() const override;
  std::string nonfinite_message(std::int64_t record) const override;
  void save(CheckpointWriter& out) const override;
  void restore(const CheckpointReader& in, RunFile& file) override;
  double work_per_step() const override;
  std::string work_unit() const override { return "pairs"; }
  std::vector<std::string> summary() const override { return summary_; }
  double state_bytes() const override { return 8.0 * partition_.n_global * params_.tokens * params_.d; }

  // The last record's statistics (every rank).
  const PhaseRecord& last() const { return last_; }

 private:
  // The draw of B and V in force at time t: floor(t / regen_period), or 0 without redraws.
  std::uint64_t draw_at(double t) const;
  // B and V of draw `draw` for the system with global index g (keyed by its scope).
  void matrices_at(std::int64_t g, std::uint64_t draw, std::vector<double>& b, std::vector<double>& v) const;
  PhaseRecord gather_statistics();
  // The grid-wide index of this run's system g (its draws' key): the same system in a block and in the whole grid.
  std::uint64_t grid_system(std::int64_t g) const {
    return static_cast<std::uint64_t>(g + params_.beta_offset * params_.systems);
  }

  const Comm& comm_;
  PhaseParams params_;
  Partition partition_;        // of the betas.size() * systems systems
  std::vector<double> x_;      // [local systems, n, d]
  PhaseRecord last_;
  std::string line_;
  std::vector<std::string> summary_;
};

}  // namespace tokdyn
