#include "tokdyn/meanfield/circle_grid.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/pairs/energy.hpp"
#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/io/run_file.hpp"

namespace tokdyn {
namespace {


// Van Leer's limited slope of cell i from its two one-sided differences: harmonic mean when they agree in
// sign, 0 at an extremum. |slope| <= 2 min(|a|, |b|), which keeps the face values between the neighbours.
double van_leer(double a, double b) { return a * b > 0 ? 2 * a * b / (a + b) : 0.0; }

// 4-point Gauss-Legendre on [-1, 1]: exact for polynomials of degree 7, so the initial cell averages of a
// smooth density carry an error ~ dtheta^8, far below the scheme's.
constexpr double kGaussNodes[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526};
constexpr double kGaussWeights[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538};

}  // namespace

PetscErrorCode create_circle_grid(MPI_Comm comm, PetscInt cells, DM* grid) {
  PetscFunctionBeginUser;
  PetscCall(DMDACreate1d(comm, DM_BOUNDARY_PERIODIC, cells, 1, 2, nullptr, grid));
  PetscCall(DMSetUp(*grid));
  PetscFunctionReturn(0);
}

CircleGridSolver::CircleGridSolver(MPI_Comm comm, const CircleGridParams& params, std::unique_ptr<GaussianField> field,
                                   const InitialDensity& initial)
    : comm_(comm), params_(params), field_(std::move(field)) {
  int ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm_, &ranks));
  const std::int64_t m = params_.cells;
  if (m < 2 * static_cast<std::int64_t>(ranks) || m < 8)
    throw InputError("meanfield.cells = " + std::to_string(m) + " is too small: at least 8 and 2 cells per rank (" +
                     std::to_string(ranks) + " ranks)");
  if (field_ && field_->dimension() != 2) throw InputError("meanfield: the grid solver needs model.d = 2");
  width_ = (2 * std::numbers::pi) / static_cast<double>(m);

  TOKDYN_PETSC_CHECK(create_circle_grid(comm_, static_cast<PetscInt>(m), da_.out()));
  TOKDYN_PETSC_CHECK(DMCreateGlobalVector(da_, rho_.out()));
  TOKDYN_PETSC_CHECK(VecDuplicate(rho_, predictor_.out()));
  TOKDYN_PETSC_CHECK(DMCreateLocalVector(da_, local_.out()));
  TOKDYN_PETSC_CHECK(VecScatterCreateToAll(rho_, to_all_.out(), all_.out()));
  TOKDYN_PETSC_CHECK(DMDAGetCorners(da_, &first_cell_, nullptr, nullptr, &cells_local_, nullptr, nullptr));
  // Checkpoints store the cells in the block partition of tokdyn; PETSc's default 1-D split is the same.
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank));
  const Partition blocks(m, ranks);
  if (first_cell_ != blocks.begin(rank) || cells_local_ != blocks.count(rank))
    throw SystemError("DMDA ownership differs from the block partition of the cells");
  first_face_ = first_cell_ - 1;  // the left face of the first cell is the right face of the one before
  faces_ = cells_local_ + 1;

  // Initial cell averages (1/dtheta) int_cell rho_0, every rank over the whole circle in one order, then
  // normalised so that sum_i rho_i dtheta = 1 exactly as computed.
  rho_all_.resize(m);
  double total = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    double avg = 0;
    for (int q = 0; q < 4; ++q) {
      const double theta = (static_cast<double>(i) + 0.5 + 0.5 * kGaussNodes[q]) * width_;
      avg += 0.5 * kGaussWeights[q] * initial.relative(std::cos(theta));
    }
    rho_all_[i] = avg;
    total += avg * width_;
  }
  PetscScalar* r = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArray(rho_, &r));
  for (PetscInt k = 0; k < cells_local_; ++k) r[k] = rho_all_[first_cell_ + k] / total;
  TOKDYN_PETSC_CHECK(VecRestoreArray(rho_, &r));

  if (field_) {
    // psi[f, 2k + a] = sigma_k(x_f) e_theta(x_f)_a: the tangential noise at face f is psi[f, :] . dB.
    const std::int64_t kmodes = field_->modes();
    std::vector<double> xf(faces_ * 2), phi(faces_ * kmodes);
    for (std::int64_t f = 0; f < faces_; ++f) {
      const double theta = static_cast<double>(first_face_ + f + 1) * width_;
      xf[2 * f] = std::cos(theta);
      xf[2 * f + 1] = std::sin(theta);
    }
    field_->evaluate(xf.data(), faces_, phi.data());  // [faces, K]
    psi_.resize(faces_ * 2 * kmodes);
    for (std::int64_t f = 0; f < faces_; ++f)
      for (std::int64_t k = 0; k < kmodes; ++k) {
        psi_[(f * kmodes + k) * 2] = -xf[2 * f + 1] * phi[f * kmodes + k];
        psi_[(f * kmodes + k) * 2 + 1] = xf[2 * f] * phi[f * kmodes + k];
      }
  }

  // FFTW_ESTIMATE: the plan does not depend on timings, so every rank (and every run) does the same arithmetic.
  fft_real_ = fftw_alloc_real(m);
  fft_spec_ = fftw_alloc_complex(m / 2 + 1);
  if (!fft_real_ || !fft_spec_) throw SystemError("FFTW: out of memory for " + std::to_string(m) + " cells");
  forward_ = fftw_plan_dft_r2c_1d(static_cast<int>(m), fft_real_, fft_spec_, FFTW_ESTIMATE);
  backward_ = fftw_plan_dft_c2r_1d(static_cast<int>(m), fft_spec_, fft_real_, FFTW_ESTIMATE);
  if (!forward_ || !backward_) throw SystemError("FFTW: no plan for " + std::to_string(m) + " cells");

  // Face f sits at (f + 1) dtheta, cell j at (j + 1/2) dtheta: offsets (f - j + 1/2) dtheta. Kernels carry
  // e^{-|b|} so that e^{b cos} never overflows; the softmax ratio does not see it, USA multiplies it back.
  std::vector<double> kz(m), kt(m);
  for (std::int64_t s = 0; s < m; ++s) {
    const double off = (static_cast<double>(s) + 0.5) * width_;
    const double e = std::exp(params_.beta * std::cos(off) - std::abs(params_.beta)) * width_;
    kz[s] = e;                     // Z(theta) = int e^{b cos(theta - phi)} rho(phi) dphi
    kt[s] = -e * std::sin(off);    // T(theta) = int e^{b cos(theta - phi)} sin(phi - theta) rho(phi) dphi
  }
  forward(kz.data(), z_hat_);
  forward(kt.data(), t_hat_);
  for (auto* v : {&u_, &dw_, &flux_}) v->assign(faces_, 0.0);
  k1_.resize(cells_local_);
  k2_.resize(cells_local_);
}

CircleGridSolver::~CircleGridSolver() {
  // Reverse order of creation; a destructor cannot report errors, and these calls only free memory. The PETSc
  // objects are members that destroy themselves.
  if (backward_) fftw_destroy_plan(backward_);
  if (forward_) fftw_destroy_plan(forward_);
  fftw_free(fft_spec_);
  fftw_free(fft_real_);
}

void CircleGridSolver::forward(const double* in, std::vector<std::complex<double>>& out) {
  const std::int64_t m = params_.cells;
  std::copy(in, in + m, fft_real_);
  fftw_execute(forward_);
  out.resize(m / 2 + 1);
  for (std::int64_t k = 0; k <= m / 2; ++k) out[k] = {fft_spec_[k][0], fft_spec_[k][1]};
}

void CircleGridSolver::convolve(const std::vector<std::complex<double>>& kernel_hat,
                                const std::vector<std::complex<double>>& rho_hat, std::vector<double>& out) {
  const std::int64_t m = params_.cells;
  const double inv_m = 1.0 / static_cast<double>(m);  // FFTW's inverse is unnormalised
  for (std::int64_t k = 0; k <= m / 2; ++k) {
    const std::complex<double> p = kernel_hat[k] * rho_hat[k] * inv_m;
    fft_spec_[k][0] = p.real();
    fft_spec_[k][1] = p.imag();
  }
  fftw_execute(backward_);
  out.assign(fft_real_, fft_real_ + m);
}

void CircleGridSolver::gather(Vec rho) {
  TOKDYN_PETSC_CHECK(VecScatterBegin(to_all_, rho, all_, INSERT_VALUES, SCATTER_FORWARD));
  TOKDYN_PETSC_CHECK(VecScatterEnd(to_all_, rho, all_, INSERT_VALUES, SCATTER_FORWARD));
  const PetscScalar* a = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArrayRead(all_, &a));
  std::copy(a, a + params_.cells, rho_all_.begin());
  TOKDYN_PETSC_CHECK(VecRestoreArrayRead(all_, &a));
}

const std::vector<double>& CircleGridSolver::density() {
  gather(rho_);
  return rho_all_;
}

void CircleGridSolver::face_velocity(std::vector<double>& u) {
  const std::int64_t m = params_.cells;
  if (params_.factor == 0) {
    std::fill(u.begin(), u.end(), 0.0);
    return;
  }
  forward(rho_all_.data(), rho_hat_);
  convolve(z_hat_, rho_hat_, conv_z_);
  convolve(t_hat_, rho_hat_, conv_t_);
  const double scale = params_.factor * params_.value * (params_.normalized ? 1.0 : std::exp(std::abs(params_.beta)));
  for (std::int64_t f = 0; f < faces_; ++f) {
    const std::int64_t g = ((first_face_ + f) % m + m) % m;
    u[f] = scale * (params_.normalized ? conv_t_[g] / conv_z_[g] : conv_t_[g]);
  }
}

void CircleGridSolver::face_noise(const double* dB, std::int64_t count, double* dw) const {
  const int width = static_cast<int>(2 * field_->modes());
  // dw [count, faces] = dB [count, 2K] psi [faces, 2K]^T
  gemm_nt(static_cast<int>(count), static_cast<int>(faces_), width, 1.0, dB, width, psi_.data(), width, 0.0, dw,
          static_cast<int>(faces_));
}

void CircleGridSolver::tendency(Vec rho, double h, const std::vector<double>& dw, std::vector<double>& out) {
  if (params_.factor != 0) {
    gather(rho);
    face_velocity(u_);
  }
  TOKDYN_PETSC_CHECK(DMGlobalToLocalBegin(da_, rho, INSERT_VALUES, local_));
  TOKDYN_PETSC_CHECK(DMGlobalToLocalEnd(da_, rho, INSERT_VALUES, local_));
  const PetscScalar* r = nullptr;  // indexed by global cell, first_cell - 2 .. first_cell + count + 1
  TOKDYN_PETSC_CHECK(DMDAVecGetArrayRead(da_, local_, &r));
  for (std::int64_t f = 0; f < faces_; ++f) {
    const std::int64_t i = first_face_ + f;  // face between cells i and i + 1
    const double c = (u_[f] * h + (field_ ? dw[f] : 0.0)) / width_;
    if (c >= 0) {
      flux_[f] = c * (r[i] + 0.5 * van_leer(r[i] - r[i - 1], r[i + 1] - r[i]));
    } else {
      flux_[f] = c * (r[i + 1] - 0.5 * van_leer(r[i + 1] - r[i], r[i + 2] - r[i + 1]));
    }
  }
  TOKDYN_PETSC_CHECK(DMDAVecRestoreArrayRead(da_, local_, &r));
  // Both ranks beside a face compute its flux from the same values: the telescoping sum, hence the mass,
  // is exact up to the round-off of the cell updates.
  for (PetscInt k = 0; k < cells_local_; ++k) out[k] = -(flux_[k + 1] - flux_[k]);
}

BrownianPath& CircleGridSolver::path(int refinement) {
  if (static_cast<int>(paths_.size()) <= refinement) paths_.resize(refinement + 1);
  auto& p = paths_[refinement];
  if (!p)
    p = std::make_unique<BrownianPath>(params_.seed, params_.steps << refinement, params_.horizon, field_->modes() * 2);
  return *p;
}

double CircleGridSolver::noise_max(int refinement, std::int64_t layer) {
  const std::int64_t n_sub = std::int64_t{1} << refinement, block = std::min(kBlock, n_sub);
  // The step reuses these dW when they fit (kKeptNoise doubles) instead of drawing them again.
  kept_ = n_sub * faces_ <= kKeptNoise;
  if (kept_) kept_noise_.resize(n_sub * faces_);
  double w_max = 0;
  for (std::int64_t s0 = 0; s0 < n_sub; s0 += block) {
    block_noise(refinement, layer * n_sub + s0, block);
    for (double w : dw_block_) w_max = std::max(w_max, std::abs(w));
    if (kept_) std::copy(dw_block_.begin(), dw_block_.end(), kept_noise_.begin() + s0 * faces_);
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &w_max, 1, MPI_DOUBLE, MPI_MAX, comm_));
  return w_max;
}

void CircleGridSolver::block_noise(int refinement, std::int64_t first, std::int64_t count) {
  const std::int64_t width = 2 * field_->modes();
  increments_.resize(count * width);
  dw_block_.resize(count * faces_);
  path(refinement).increments_block(first, count, increments_.data());  // [count, K, 2]
  face_noise(increments_.data(), count, dw_block_.data());             // [count, faces]
}

void CircleGridSolver::step(std::int64_t layer) {
  const double layer_h = params_.horizon / static_cast<double>(params_.steps);
  // Largest attention speed: |T| <= Z for SA, |T| <= e^{|b|} for USA (unit mass), times |a v|.
  const double u_max = std::abs(params_.factor * params_.value) * (params_.normalized ? 1.0 : std::exp(std::abs(params_.beta)));
  // The noise is stationary, so the previous layer's refinement (or one less) is the place to start looking.
  int r = std::max(refinement_ - 1, 0);
  for (;; ++r) {
    // r follows from all-reduced speeds: every rank throws here at once.
    if (r > params_.max_refinement)
      throw InputError("meanfield: a layer needs more than 2^" + std::to_string(params_.max_refinement) +
                           " sub-steps to keep the Courant number below meanfield.cfl; increase model.L or "
                           "meanfield.max_refinement, or use fewer cells",
                       true);
    const double h = layer_h / static_cast<double>(std::int64_t{1} << r);
    const double w_max = field_ ? noise_max(r, layer) : 0.0;
    if ((u_max * h + w_max) / width_ <= params_.cfl) break;
  }
  refinement_ = r;
  const std::int64_t n_sub = std::int64_t{1} << r, block = std::min(kBlock, n_sub);
  const double h = layer_h / static_cast<double>(n_sub);
  for (std::int64_t s = 0; s < n_sub; ++s) {
    if (field_) {
      if (kept_) {
        std::copy_n(kept_noise_.begin() + s * faces_, faces_, dw_.begin());
      } else {
        if (s % block == 0) block_noise(r, layer * n_sub + s, block);
        std::copy_n(dw_block_.begin() + (s % block) * faces_, faces_, dw_.begin());
      }
    }
    // Stochastic Heun = SSP-RK2 on the transport with this sub-step's noise in both stages:
    // rho~ = rho + A(rho), rho' = (rho + rho~ + A(rho~)) / 2; a convex combination of positive Euler steps.
    tendency(rho_, h, dw_, k1_);
    PetscScalar* x = nullptr;
    PetscScalar* y = nullptr;
    TOKDYN_PETSC_CHECK(VecGetArray(rho_, &x));
    TOKDYN_PETSC_CHECK(VecGetArray(predictor_, &y));
    for (PetscInt k = 0; k < cells_local_; ++k) y[k] = x[k] + k1_[k];
    TOKDYN_PETSC_CHECK(VecRestoreArray(predictor_, &y));
    TOKDYN_PETSC_CHECK(VecRestoreArray(rho_, &x));
    tendency(predictor_, h, dw_, k2_);
    TOKDYN_PETSC_CHECK(VecGetArray(rho_, &x));
    for (PetscInt k = 0; k < cells_local_; ++k) x[k] += 0.5 * (k1_[k] + k2_[k]);
    TOKDYN_PETSC_CHECK(VecRestoreArray(rho_, &x));
  }
  last_substeps_ = n_sub;
}

MeanFieldObservables CircleGridSolver::observe(double beta) {
  const std::int64_t m = params_.cells;
  gather(rho_);  // every rank evaluates the same sums in the same order: rank-independent bits
  if (beta != energy_beta_) {
    // E_beta kernel between cell centres over e^beta, 1 - e^{beta (cos s - 1)} >= 0 in its expm1 form (no
    // cancellation near a cluster, where E_beta is small); e^beta is applied once to the total.
    std::vector<double> ke(m);
    for (std::int64_t s = 0; s < m; ++s)
      ke[s] = -std::expm1(beta * (std::cos(static_cast<double>(s) * width_) - 1.0));
    forward(ke.data(), energy_hat_);
    energy_beta_ = beta;
  }
  MeanFieldObservables o;
  o.mean.assign(2, 0.0);
  o.min_density = rho_all_[0];
  for (std::int64_t i = 0; i < m; ++i) {
    const double a = static_cast<double>(i) * width_, b = static_cast<double>(i + 1) * width_;
    o.mass += rho_all_[i] * width_;
    o.min_density = std::min(o.min_density, rho_all_[i]);
    o.mean[0] += rho_all_[i] * (std::sin(b) - std::sin(a));  // int_cell cos
    o.mean[1] += rho_all_[i] * (std::cos(a) - std::cos(b));  // int_cell sin
  }
  forward(rho_all_.data(), rho_hat_);
  convolve(energy_hat_, rho_hat_, conv_z_);
  double e = 0;
  for (std::int64_t i = 0; i < m; ++i) e += rho_all_[i] * conv_z_[i];
  o.energy = energy_from_scaled(beta, 0.5 * e * width_ * width_);
  o.substeps = last_substeps_;
  return o;
}

void CircleGridSolver::gather_measure(std::vector<double>& points, std::vector<double>& masses) {
  gather(rho_);
  const std::int64_t m = params_.cells;
  points.resize(2 * m);
  masses.resize(m);
  for (std::int64_t i = 0; i < m; ++i) {
    const double theta = (static_cast<double>(i) + 0.5) * width_;
    points[2 * i] = std::cos(theta);
    points[2 * i + 1] = std::sin(theta);
    masses[i] = rho_all_[i] * width_;
  }
}

std::vector<double> CircleGridSolver::state() const {
  const PetscScalar* x = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArrayRead(rho_, &x));
  std::vector<double> rows(x, x + cells_local_);
  TOKDYN_PETSC_CHECK(VecRestoreArrayRead(rho_, &x));
  return rows;
}

void CircleGridSolver::restore(const std::vector<double>& rows, std::int64_t counter) {
  if (static_cast<PetscInt>(rows.size()) != cells_local_) throw SystemError("grid restore: wrong number of cells");
  PetscScalar* x = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArray(rho_, &x));
  std::copy(rows.begin(), rows.end(), x);
  TOKDYN_PETSC_CHECK(VecRestoreArray(rho_, &x));
  refinement_ = static_cast<int>(counter);
}

// The restored file holds theta and the density rows up to the checkpoint: the next snapshot appends a row.
void CircleGridSolver::resume_snapshots(RunGroup group) { snapshots_begun_ = group.rows("density") > 0; }

bool CircleGridSolver::finite() {
  const PetscScalar* x = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArrayRead(rho_, &x));
  int bad = 0;
  for (PetscInt k = 0; k < cells_local_; ++k) bad |= std::isfinite(x[k]) ? 0 : 1;
  TOKDYN_PETSC_CHECK(VecRestoreArrayRead(rho_, &x));
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm_));
  return bad == 0;
}

void CircleGridSolver::write_snapshot(RunGroup group, std::uint64_t row) {
  if (!snapshots_begun_) {
    std::vector<double> theta(params_.cells);
    for (std::int64_t i = 0; i < params_.cells; ++i) theta[i] = (static_cast<double>(i) + 0.5) * width_;
    group.write("theta", theta);
    snapshots_begun_ = true;
  }
  const PetscScalar* x = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArrayRead(rho_, &x));
  group.write_row("density", {static_cast<hsize_t>(params_.cells)}, row, x, static_cast<hsize_t>(first_cell_),
                  static_cast<hsize_t>(cells_local_));
  TOKDYN_PETSC_CHECK(VecRestoreArrayRead(rho_, &x));
}

}  // namespace tokdyn
