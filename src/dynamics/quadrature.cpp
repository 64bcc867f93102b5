#include "tokdyn/dynamics/quadrature.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/attention/fourier_attention.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/sphere/quadrature_points.hpp"

namespace tokdyn {

QuadratureSolver::QuadratureSolver(MPI_Comm comm, SdeSetup setup, int refinement, const InitialDensity& initial,
                                   int tile)
    : comm_(comm), d_(setup.params.d), refinement_(refinement) {
  int ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm_, &ranks));
  partition_ = Partition(setup.params.n, ranks);
  const std::int64_t begin = partition_.begin(rank_), count = partition_.count(rank_);
  x_.resize(count * d_);
  quadrature_points(d_, partition_.n_global, begin, count, x_.data());
  // Masses proportional to the density relative to uniform at the points (equal-weight rules for the
  // uniform measure), normalised by a global sum taken in a rank-independent way (partial sums of slices
  // would depend on the partition: sum the whole set on every rank instead, O(N) once).
  std::vector<double> all_x(d_);
  double total = 0;
  for (std::int64_t j = 0; j < partition_.n_global; ++j) {
    quadrature_points(d_, partition_.n_global, j, 1, all_x.data());
    total += initial.relative(all_x[0]);
  }
  w_.resize(count);
  for (std::int64_t i = 0; i < count; ++i) w_[i] = initial.relative(x_[i * d_]) / total;
  setup.n_local = count;
  if (setup.attention) setup.attention->set_masses(w_.data());
  scheme_ = sde_schemes().make("heun", setup);
  tile_ = tile;
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

bool QuadratureSolver::finite() {
  int bad = 0;
  for (double v : x_) bad |= std::isfinite(v) ? 0 : 1;
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm_));
  return bad == 0;
}

void QuadratureSolver::write_snapshot(hid_t group, std::uint64_t row) {
  const auto begin = static_cast<hsize_t>(partition_.begin(rank_)), count = static_cast<hsize_t>(partition_.count(rank_));
  if (snapshots_.id() < 0) {
    h5::Handle masses = h5::create_dataset(group, "masses", H5T_IEEE_F64LE, {static_cast<hsize_t>(partition_.n_global)});
    h5::write_slab(masses, H5T_NATIVE_DOUBLE, w_.data(), begin, count);
    snapshots_ = h5::create_series(group, "points", H5T_IEEE_F64LE,
                                   {static_cast<hsize_t>(partition_.n_global), static_cast<hsize_t>(d_)});
  }
  h5::write_series_row(snapshots_, row, H5T_NATIVE_DOUBLE, x_.data(), begin, count);
}

}  // namespace tokdyn
