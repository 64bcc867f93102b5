#include "tokdyn/meanfield/quadrature.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/attention/fourier_attention.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/gather.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/sphere/quadrature_points.hpp"
#include <stdexcept>

namespace tokdyn {

void quadrature_rule(const InitialDensity& initial, int d, const Partition& partition, int rank, std::vector<double>& x,
                     std::vector<double>& masses) {
  const std::int64_t begin = partition.begin(rank), count = partition.count(rank);
  x.resize(count * d);
  quadrature_points(d, partition.n_global, begin, count, x.data());
  // Normalised by the sum over the whole set, taken on every rank in index order: the masses do not
  // depend on the partition (partial sums of slices would).
  std::vector<double> point(d);
  double total = 0;
  for (std::int64_t j = 0; j < partition.n_global; ++j) {
    quadrature_points(d, partition.n_global, j, 1, point.data());
    total += initial.relative(point[0]);
  }
  masses.resize(count);
  for (std::int64_t i = 0; i < count; ++i) masses[i] = initial.relative(x[i * d]) / total;
}

QuadratureSolver::QuadratureSolver(MPI_Comm comm, SdeSetup setup, int refinement, std::vector<double> x,
                                   std::vector<double> masses, int tile)
    : comm_(comm), d_(setup.params.d), refinement_(refinement), tile_(tile), x_(std::move(x)), w_(std::move(masses)) {
  int ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm_, &ranks));
  partition_ = Partition(setup.params.n, ranks);
  setup.n_local = partition_.count(rank_);
  if (static_cast<std::int64_t>(w_.size()) != setup.n_local || static_cast<std::int64_t>(x_.size()) != setup.n_local * d_)
    throw std::invalid_argument("QuadratureSolver: points and masses do not match the partition");
  if (setup.attention) setup.attention->set_masses(w_.data());
  scheme_ = sde_schemes().make("heun", setup);
}

std::int64_t QuadratureSolver::first_point() const { return partition_.begin(rank_); }

void QuadratureSolver::step(std::int64_t layer) {
  const std::int64_t n_sub = std::int64_t{1} << refinement_;
  for (std::int64_t s = 0; s < n_sub; ++s) scheme_->step(layer * n_sub + s, x_.data());
}

MeanFieldObservables QuadratureSolver::observe(double beta) {
  MeanFieldObservables o;
  o.substeps = std::int64_t{1} << refinement_;
  o.mean.assign(d_, 0.0);
  double local[2] = {0, 0};  // mass, and the smallest mass (as -min for one MAX reduction)
  local[1] = -std::numeric_limits<double>::infinity();
  for (double w : w_) local[0] += w, local[1] = std::max(local[1], -w);
  double sums[1], maxes[1];
  TOKDYN_MPI_CHECK(MPI_Allreduce(&local[0], sums, 1, MPI_DOUBLE, MPI_SUM, comm_));
  TOKDYN_MPI_CHECK(MPI_Allreduce(&local[1], maxes, 1, MPI_DOUBLE, MPI_MAX, comm_));
  o.mass = sums[0];
  o.min_density = -maxes[0];
  if (d_ == 2) {
    const CircleStatistics c = circle_statistics(comm_, partition_.count(rank_), x_.data(), w_.data(), beta);
    o.energy = c.energy;
    o.mean = {c.mean[0], c.mean[1]};
    return o;
  }
  if (!statistics_ || statistics_beta_ != beta) {
    statistics_.emplace(comm_, partition_, d_, beta, 1, tile_);
    statistics_->set_masses(w_.data());
    statistics_beta_ = beta;
  }
  const PairStatistics s = statistics_->compute(x_.data());
  o.energy = s.energy;
  for (std::size_t i = 0; i < w_.size(); ++i)
    for (int a = 0; a < d_; ++a) o.mean[a] += w_[i] * x_[i * d_ + a];
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, o.mean.data(), d_, MPI_DOUBLE, MPI_SUM, comm_));
  return o;
}

void QuadratureSolver::gather_measure(std::vector<double>& points, std::vector<double>& masses) {
  points = allgather_rows(comm_, partition_, x_, d_);
  masses = allgather_rows(comm_, partition_, w_, 1);
}

void QuadratureSolver::restore(const std::vector<double>& rows, std::int64_t) {
  if (rows.size() != x_.size()) throw SystemError("quadrature restore: wrong number of points");
  x_ = rows;
}

// The restored file holds the masses and the point rows up to the checkpoint: the next snapshot appends a row.
void QuadratureSolver::resume_snapshots(RunGroup group) { snapshots_begun_ = group.rows("points") > 0; }

bool QuadratureSolver::finite() {
  int bad = 0;
  for (double v : x_) bad |= std::isfinite(v) ? 0 : 1;
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm_));
  return bad == 0;
}

void QuadratureSolver::write_snapshot(RunGroup group, std::uint64_t row) {
  const auto begin = static_cast<hsize_t>(partition_.begin(rank_)), count = static_cast<hsize_t>(partition_.count(rank_));
  if (!snapshots_begun_) {
    // A dataset written whole takes every rank's copy of the values (rank 0 writes them): once, n doubles.
    group.write("masses", allgather_rows(comm_, partition_, w_, 1));
    snapshots_begun_ = true;
  }
  group.write_row("points", {static_cast<hsize_t>(partition_.n_global), static_cast<hsize_t>(d_)}, row, x_.data(),
                  begin, count);
}

}  // namespace tokdyn
