// Solvers of the mean-field SPDE of doc/science.md section 4 (the law of one token given the common noise),
// chosen by name: an Eulerian density on a grid of the circle, or Lagrangian weighted points on any sphere.
// Both see the common noise of the particle SDE (same field modes, same Brownian path for the same seed).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/deck/registry.hpp"
#include "tokdyn/noise/gaussian_field.hpp"

namespace tokdyn {

class MemoryEstimate;
class RunGroup;

// The initial law mu_0 by its density relative to the uniform measure on S^{d-1}, in the first coordinate:
// cosine: 1 + a x_1 (a in [0, 1]; on S^1 the density (1 + a cos theta) / 2 pi); von-mises: e^{c x_1} / Z.
struct InitialDensity {
  std::string kind = "cosine";
  double amplitude = 0.5;      // a
  double concentration = 1.0;  // c
  // Unnormalised density relative to uniform at a point with first coordinate x1 (<= its maximum, max_relative()).
  double relative(double x1) const;
  double max_relative() const;
};

// x [count, d]: tokens begin .. begin + count - 1 drawn iid from mu_0 by rejection from the uniform measure,
// token i from the stream of (seed, i) alone: the same tokens on any number of ranks.
void sample_initial_density(const InitialDensity& initial, std::uint64_t seed, int d, std::int64_t begin,
                            std::int64_t count, double* x);

struct MeanFieldObservables {
  double mass = 0;          // total mass (1 up to round-off)
  double energy = 0;        // E_beta(mu) = (1/2) int int (e^beta - e^{beta <x, y>}) dmu dmu
  double min_density = 0;   // grid: smallest cell density (positivity); points: smallest mass
  std::vector<double> mean; // [d]: int x dmu
  std::int64_t substeps = 1;  // sub-steps of the last layer (grid: CFL)
};

class MeanFieldSolver {
 public:
  virtual ~MeanFieldSolver() = default;
  // Advances the measure from layer `layer` to layer + 1 (time t_l = l T / L). Collective.
  virtual void step(std::int64_t layer) = 0;
  // Observables of the current measure; beta is the energy's (diagnostics.beta). Collective.
  virtual MeanFieldObservables observe(double beta) = 0;
  // False when the state holds NaN or Inf on any rank. Collective.
  virtual bool finite() = 0;
  // Appends the current measure as row `row` of the solver's snapshot series in group (/meanfield); the
  // first also writes what the rows are read with (grid: theta; points: masses). Collective.
  virtual void write_snapshot(RunGroup group, std::uint64_t row) = 0;
  // The measure on every rank as weighted points: points [n, d], masses [n] summing to 1 (grid: the cell
  // centres and the cell masses, in cell order from theta = 0). Collective.
  virtual void gather_measure(std::vector<double>& points, std::vector<double>& masses) = 0;
  // True when gather_measure gives the cells of a piecewise-constant density (exact circular W2 of it).
  virtual bool piecewise_constant() const { return false; }
  // Checkpoints: this rank's state rows [rows of the block partition of state_rows(), state_width()] (grid:
  // cell densities; points: coordinates), and an integer of the solver's own that a restart needs for the
  // same bits (the grid's sub-step level). Collective restore.
  virtual std::int64_t state_rows() const = 0;
  virtual int state_width() const = 0;
  virtual std::vector<double> state() const = 0;
  virtual void restore(const std::vector<double>& rows, std::int64_t counter) = 0;
  virtual std::int64_t counter() const { return 0; }
  // A restarted run: the snapshot series of group (restored with the run file) continued from its rows.
  // Collective.
  virtual void resume_snapshots(RunGroup group) = 0;
  // Size of the discretisation (cells or points) and its unit, for the progress line.
  virtual std::int64_t size() const = 0;
  virtual std::string size_unit() const = 0;
};

// What a solver is built from (studies/keys.hpp reads it from the deck): the model's d, L, T, its
// attention and noise, the discretisation and the initial law.
struct MeanFieldSpec {
  std::string solver = "grid";  // a name of meanfield_solvers()
  int d = 2;
  std::int64_t layers = 100;    // L: output times l T / L
  double horizon = 1;           // T
  AttentionSpec attention;
  bool noise = true;
  FieldParams field;            // in dimension d
  std::int64_t cells = 1024;    // grid: cells M
  double cfl = 0.25;            // grid: largest Courant number of a sub-step
  int max_refinement = 16;      // grid: at most 2^r sub-steps per layer
  std::int64_t points = 4096;   // quadrature: points M
  int refinement = 0;           // quadrature: 2^q Heun steps per layer
  InitialDensity density;
  std::uint64_t seed = 1;       // of the noise path (run.seed; a study's replicas set their own)
  int tile = 256;               // quadrature: rows per BLAS tile of the attention
};

struct MeanFieldSetup {
  MeanFieldSpec spec;
  MPI_Comm comm = MPI_COMM_WORLD;
};

using MeanFieldRegistry = Registry<MeanFieldSolver, const MeanFieldSetup&>;
const MeanFieldRegistry& meanfield_solvers();

// The solver's arrays per rank for the memory check (grid cells or quadrature points, noise modes).
void meanfield_memory(MemoryEstimate& memory, const MeanFieldSpec& spec, int ranks);

}  // namespace tokdyn
