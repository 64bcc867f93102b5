#include "tokdyn/power/alignment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/gather.hpp"
#include "tokdyn/spectral/dense_eigen.hpp"
#include "tokdyn/spectral/distributed_layer_matrix.hpp"
#include "tokdyn/spectral/eigensolver.hpp"

namespace tokdyn {

namespace {

double inner(const double* a, const double* b, int d) {
  double s = 0;
  for (int k = 0; k < d; ++k) s += a[k] * b[k];
  return s;
}

// v <- v - sum_k <v, basis_k> basis_k over the first `rows` orthonormal rows; returns |v| after.
double orthogonalize(double* v, const double* basis, int rows, int d) {
  for (int pass = 0; pass < 2; ++pass)  // twice: classical Gram-Schmidt re-orthogonalised
    for (int r = 0; r < rows; ++r) {
      const double p = inner(v, basis + static_cast<std::size_t>(r) * d, d);
      for (int k = 0; k < d; ++k) v[k] -= p * basis[static_cast<std::size_t>(r) * d + k];
    }
  return std::sqrt(inner(v, v, d));
}

// Appends v, orthonormalised against the rows already in basis, as a new row; if v lies (numerically) in
// their span, the coordinate axis least represented in the basis is used instead.
void append_orthonormal(std::vector<double>& basis, const double* v, int d) {
  const int rows = static_cast<int>(basis.size() / d);
  std::vector<double> w(v, v + d);
  double norm = orthogonalize(w.data(), basis.data(), rows, d);
  if (!(norm > 1e-10)) {
    int axis = 0;
    double least = std::numeric_limits<double>::infinity();
    for (int k = 0; k < d; ++k) {
      double s = 0;
      for (int r = 0; r < rows; ++r) s += basis[static_cast<std::size_t>(r) * d + k] * basis[static_cast<std::size_t>(r) * d + k];
      if (s < least) least = s, axis = k;
    }
    std::fill(w.begin(), w.end(), 0.0);
    w[axis] = 1;
    norm = orthogonalize(w.data(), basis.data(), rows, d);
  }
  for (int k = 0; k < d; ++k) basis.push_back(w[k] / norm);
}

// Projection coefficients of x on the orthonormal rows of basis [rows, d], and |x|^2.
double project(const std::vector<double>& basis, int d, const double* x, double* coeff) {
  const int rows = static_cast<int>(basis.size() / d);
  for (int r = 0; r < rows; ++r) coeff[r] = inner(x, basis.data() + static_cast<std::size_t>(r) * d, d);
  return inner(x, x, d);
}

}  // namespace

double LeadingDirection::angle() const { return std::atan2(im, re); }

LeadingDirection leading_direction(int d, const std::vector<double>& f, bool residual) {
  if (d < 2) throw std::invalid_argument("leading_direction: d must be at least 2");
  if (f.size() != static_cast<std::size_t>(d) * d) throw std::invalid_argument("leading_direction: F is not d x d");
  std::vector<double> m = f;
  if (residual)
    for (int k = 0; k < d; ++k) m[static_cast<std::size_t>(k) * d + k] += 1;
  const DenseEigen e = dense_eigen(d, m.data());
  return leading_direction_from(d, d, e.re.data(), e.im.data(), e.right.data());
}

LeadingDirection leading_direction_from(int d, int count, const double* re, const double* im, const double* right) {
  LeadingDirection lead;
  lead.d = d;
  lead.pair = im[0] != 0;
  lead.re = re[0];
  lead.im = im[0];
  lead.modulus = std::hypot(lead.re, lead.im);
  const int next = lead.pair ? 2 : 1;
  lead.next_modulus = next < count ? std::hypot(re[next], im[next]) : 0;
  lead.gap = lead.modulus > 0 ? 1 - lead.next_modulus / lead.modulus : 0;
  const int rows = lead.rank();
  lead.eigvec.assign(right, right + static_cast<std::ptrdiff_t>(rows) * d);
  for (int r = 0; r < rows; ++r) append_orthonormal(lead.basis, lead.eigvec.data() + static_cast<std::size_t>(r) * d, d);
  lead.plane = lead.basis;
  if (!lead.pair) append_orthonormal(lead.plane, right + (count > 1 ? static_cast<std::size_t>(d) : 0), d);
  return lead;
}

LeadingDirection leading_direction_krylov(MPI_Comm comm, const WeightSource& source, std::int64_t t, bool residual) {
  const int d = source.d();
  EigenSettings s;
  s.nev = std::min(4, d);  // lambda_1 (or the pair), the next eigenvalue, and v_2 for the plane
  s.residual = residual;
  s.tol = 1e-10;
  // A wide subspace: layer spectra crowd at their edge (small gaps), where a narrow one stalls.
  s.ncv = std::min(d, 64);
  s.max_it = 2000;
  const LayerOperator op(comm, source, t, residual);
  const EigenResult r = eigen_operator(comm, op, s);
  const int need = std::min(d, r.converged > 0 && r.im[0] != 0 ? 3 : 2);
  require_all(comm, r.converged >= need,
              "layer " + std::to_string(t) + ": Krylov-Schur converged " + std::to_string(r.converged) + " of the " +
                  std::to_string(need) + " leading eigenpairs needed (try power.eigensolver = lapack)");
  // The vectors are distributed by rows of F: gather each one whole, [converged, d].
  const Partition rows = op.rows();
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t local = rows.count(rank);
  std::vector<double> by_row(static_cast<std::size_t>(local) * r.converged);  // [local, converged]
  for (int k = 0; k < r.converged; ++k)
    for (std::int64_t i = 0; i < local; ++i) by_row[i * r.converged + k] = r.right[k * local + i];
  const std::vector<double> all = allgather_rows(comm, rows, by_row, r.converged);  // [d, converged]
  std::vector<double> right(static_cast<std::size_t>(r.converged) * d);
  for (int k = 0; k < r.converged; ++k)
    for (int i = 0; i < d; ++i) right[static_cast<std::size_t>(k) * d + i] = all[static_cast<std::size_t>(i) * r.converged + k];
  return leading_direction_from(d, r.converged, r.re.data(), r.im.data(), right.data());
}

double alignment(const LeadingDirection& lead, const double* x) {
  double c[2] = {0, 0};
  const double xx = project(lead.basis, lead.d, x, c);
  return std::sqrt(c[0] * c[0] + c[1] * c[1]) / std::sqrt(xx);
}

double misalignment(const LeadingDirection& lead, const double* x) {
  const int d = lead.d;
  std::vector<double> r(x, x + d);
  const double xx = inner(x, x, d);
  const double rr = orthogonalize(r.data(), lead.basis.data(), lead.rank(), d);
  return rr / std::sqrt(xx);
}

double phase(const LeadingDirection& lead, const double* x) {
  if (!lead.pair) throw std::invalid_argument("phase: the leading eigenvalue is real");
  const int d = lead.d;
  const double* a = lead.eigvec.data();      // Re v
  const double* b = lead.eigvec.data() + d;  // Im v
  // Normal equations of min |x - c1 a - c2 b| (2 x 2, a and b independent for a genuine pair).
  const double aa = inner(a, a, d), ab = inner(a, b, d), bb = inner(b, b, d), ax = inner(a, x, d), bx = inner(b, x, d);
  const double det = aa * bb - ab * ab;
  const double c1 = (bb * ax - ab * bx) / det, c2 = (aa * bx - ab * ax) / det;
  return std::atan2(-c2, c1);  // arg z, z = c1 - i c2
}

LayerAlignment layer_alignment(MPI_Comm comm, const Partition& partition, const LeadingDirection& lead,
                               const double* before, const double* after) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const int d = lead.d;
  const std::int64_t n = partition.count(rank);
  constexpr int kWidth = 5;  // per token: gamma out, gamma in, misalignment out, phase advance, misalignment in
  std::vector<double> local(static_cast<std::size_t>(n) * kWidth);
  for (std::int64_t i = 0; i < n; ++i) {
    const double* xo = after + i * d;
    const double* xi = before + i * d;
    double* row = local.data() + i * kWidth;
    row[0] = alignment(lead, xo);
    row[1] = alignment(lead, xi);
    row[2] = misalignment(lead, xo);
    row[3] = lead.pair ? std::remainder(phase(lead, xo) - phase(lead, xi), 2 * std::numbers::pi) : 0.0;
    row[4] = misalignment(lead, xi);
  }
  const std::vector<double> all = allgather_rows(comm, partition, local, kWidth);
  const std::int64_t N = partition.n_global;
  LayerAlignment s;
  std::vector<double> gamma(N);
  std::int64_t up = 0;
  double rotation = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    const double* row = all.data() + i * kWidth;
    gamma[i] = row[0];
    s.gamma_mean += row[0];
    s.gamma_in_mean += row[1];
    s.sin_mean += row[2];
    rotation += row[3];
    if (row[2] < row[4]) ++up;  // the sine fell: gamma grew (resolved below gamma's round-off)
  }
  s.gamma_mean /= N;
  s.gamma_in_mean /= N;
  s.sin_mean /= N;
  s.rho = static_cast<double>(up) / N;
  s.rotation = lead.pair ? rotation / N : std::numeric_limits<double>::quiet_NaN();
  std::sort(gamma.begin(), gamma.end());
  auto quantile = [&](double p) {
    const double pos = p * static_cast<double>(N - 1);
    const std::int64_t lo = static_cast<std::int64_t>(std::floor(pos));
    const std::int64_t hi = std::min<std::int64_t>(lo + 1, N - 1);
    return gamma[lo] + (pos - static_cast<double>(lo)) * (gamma[hi] - gamma[lo]);
  };
  s.gamma_q1 = quantile(0.25);
  s.gamma_median = quantile(0.5);
  s.gamma_q3 = quantile(0.75);
  return s;
}

double random_alignment_baseline(int d, bool plane) {
  return plane ? std::sqrt(std::numbers::pi / (2.0 * d)) : std::sqrt(2.0 / (std::numbers::pi * d));
}

FinalStateDetector::FinalStateDetector(MPI_Comm comm, const Partition& partition, int d, std::vector<double> plane,
                                       double tol, std::int64_t window)
    : comm_(comm), partition_(partition), d_(d), plane_(std::move(plane)), tol_(tol), window_(window) {
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  if (plane_.size() != static_cast<std::size_t>(2) * d_)
    throw std::invalid_argument("FinalStateDetector: the plane must be [2, d]");
}

void FinalStateDetector::observe(const double* before, const double* after) {
  const std::int64_t n = partition_.count(rank_);
  int flags[2] = {1, 1};  // every token circulates (in the plane and moving); every token is at rest
  std::vector<double> r(d_);
  for (std::int64_t i = 0; i < n; ++i) {
    const double* xo = after + i * d_;
    const double* xi = before + i * d_;
    std::copy(xo, xo + d_, r.begin());
    const double off_plane = orthogonalize(r.data(), plane_.data(), 2, d_) / std::sqrt(inner(xo, xo, d_));
    double moved = 0;
    for (int k = 0; k < d_; ++k) moved += (xo[k] - xi[k]) * (xo[k] - xi[k]);
    const bool moving = std::sqrt(moved) > tol_;
    if (!(off_plane <= tol_ && moving)) flags[0] = 0;
    if (moving) flags[1] = 0;
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MIN, comm_));
  trailing_ = flags[0] ? trailing_ + 1 : 0;
  settled_ = flags[1] != 0;
}

std::string FinalStateDetector::classify(const double* x) const {
  const std::int64_t n = partition_.count(rank_);
  const double cos_tol = std::cos(tol_);
  // Smallest cosine of a token with the direction of sum_i s_i x_i (s_i = sign(i)); the sum is global.
  auto closest_direction = [&](const std::vector<double>& sign, double& cos_min, std::int64_t& negatives) {
    std::vector<double> m(d_, 0.0);
    for (std::int64_t i = 0; i < n; ++i)
      for (int k = 0; k < d_; ++k) m[k] += sign[i] * x[i * d_ + k];
    TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, m.data(), d_, MPI_DOUBLE, MPI_SUM, comm_));
    const double norm = std::sqrt(inner(m.data(), m.data(), d_));
    cos_min = 1;
    negatives = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double c = norm > 0 ? inner(x + i * d_, m.data(), d_) / (norm * std::sqrt(inner(x + i * d_, x + i * d_, d_)))
                                : 0.0;
      cos_min = std::min(cos_min, sign[i] * c);
      if (sign[i] < 0) ++negatives;
    }
    TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &cos_min, 1, MPI_DOUBLE, MPI_MIN, comm_));
    TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &negatives, 1, MPI_INT64_T, MPI_SUM, comm_));
  };
  if (!settled_) return window_ > 0 && trailing_ >= window_ ? "limit_cycle" : "none";
  double cos_min = 0;
  std::int64_t negatives = 0;
  std::vector<double> sign(n, 1.0);
  closest_direction(sign, cos_min, negatives);
  if (cos_min >= cos_tol) return "consensus";

  // Signs relative to token 0 (owned by rank 0: the partition gives it the first block).
  std::vector<double> x0(d_, 0.0);
  if (rank_ == 0 && n > 0) std::copy(x, x + d_, x0.begin());
  TOKDYN_MPI_CHECK(MPI_Bcast(x0.data(), d_, MPI_DOUBLE, 0, comm_));
  for (std::int64_t i = 0; i < n; ++i) sign[i] = inner(x + i * d_, x0.data(), d_) >= 0 ? 1.0 : -1.0;
  closest_direction(sign, cos_min, negatives);
  if (cos_min >= cos_tol && negatives > 0 && negatives < partition_.n_global) return "bipartite";

  if (window_ > 0 && trailing_ >= window_) return "limit_cycle";
  return "none";
}

}  // namespace tokdyn
