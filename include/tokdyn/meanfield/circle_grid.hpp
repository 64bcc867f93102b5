// Eulerian solver of the mean-field SPDE on the circle S^1 (d = 2) in Stratonovich transport form
//   d rho + d_theta( rho (u[rho] dt + o dW) ) = 0,   u = a v <e_theta, Attn(rho)>,  dW = sum_k sigma_k <e_theta, dB^k>
// (the Laplacian (kappa(1)/2) rho'' of the Ito form is the Ito correction of the transport noise).
// Finite volumes on M cells distributed by a periodic PETSc DMDA; MUSCL faces with a van Leer limiter;
// the attention velocity by FFT convolution (FFTW) of e^{b cos s} and e^{b cos s} sin s with the density;
// stochastic Heun (SSP-RK2) with each layer split into 2^r sub-steps so the Courant number stays below cfl.
// The sub-steps use the Brownian path of L 2^r steps, which agrees with the particle SDE's path of L steps
// at every layer time (dyadic refinement): a grid run and a particle run with the same seed see one noise.
#pragma once

#include <fftw3.h>
#include <petscdmda.h>

#include <complex>
#include <memory>
#include <vector>

#include "tokdyn/core/petsc/petsc_owned.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/noise/brownian_path.hpp"
#include "tokdyn/noise/gaussian_field.hpp"

namespace tokdyn {

// The grid's periodic 1-d DMDA of `cells` cells, stencil width 2 (the MUSCL value at a face needs two cells
// on each side), set up. The one set-up: the solver and the probe that checks single-dash options
// (studies/petsc_components.cpp) share it.
PetscErrorCode create_circle_grid(MPI_Comm comm, PetscInt cells, DM* grid);

struct CircleGridParams {
  std::int64_t cells = 1024;  // M
  std::int64_t steps = 100;   // L (layers: output times)
  double horizon = 1;         // T
  double factor = 1;          // attention factor a (0: no attention)
  double beta = 1;            // b: logits b <x, y> (Q^T K = b I)
  double value = 1;           // v: V = v I
  bool normalized = true;     // SA (true) or USA
  double cfl = 0.4;           // largest Courant number |u h + dW| / dtheta of a sub-step
  int max_refinement = 16;    // at most 2^16 sub-steps per layer
  std::uint64_t seed = 1;     // of the Brownian path
};

class CircleGridSolver final : public MeanFieldSolver {
 public:
  // field: null for no noise.
  CircleGridSolver(MPI_Comm comm, const CircleGridParams& params, std::unique_ptr<GaussianField> field,
                   const InitialDensity& initial);
  ~CircleGridSolver() override;
  CircleGridSolver(const CircleGridSolver&) = delete;
  CircleGridSolver& operator=(const CircleGridSolver&) = delete;

  void step(std::int64_t layer) override;
  MeanFieldObservables observe(double beta) override;
  bool finite() override;
  void gather_measure(std::vector<double>& points, std::vector<double>& masses) override;
  bool piecewise_constant() const override { return true; }
  std::int64_t state_rows() const override { return params_.cells; }
  int state_width() const override { return 1; }
  std::vector<double> state() const override;
  void restore(const std::vector<double>& rows, std::int64_t counter) override;
  std::int64_t counter() const override { return refinement_; }
  void resume_snapshots(RunGroup group) override;
  void write_snapshot(RunGroup group, std::uint64_t row) override;
  std::int64_t size() const override { return params_.cells; }
  std::string size_unit() const override { return "cells"; }

  // The whole density (cell averages rho_i, sum_i rho_i dtheta = 1) on every rank; for tests.
  const std::vector<double>& density();
  double cell_width() const { return width_; }

 private:
  // tendency[i] = -(F_{i+1/2} - F_{i-1/2}) for the owned cells, from the global vector rho, with face
  // Courant numbers (u[rho] h + dW) / dtheta; dw: the noise displacement at the owned faces.
  void tendency(Vec rho, double h, const std::vector<double>& dw, std::vector<double>& out);
  // rho_all_ <- the whole density from the global vector.
  void gather(Vec rho);
  // u at the faces [first_face_, first_face_ + faces_) from rho_all_ (FFT convolution).
  void face_velocity(std::vector<double>& u);
  // dw [count, faces]: dW at this rank's faces for `count` sub-steps' increments dB [count, K, 2].
  void face_noise(const double* dB, std::int64_t count, double* dw) const;
  // max |dW| over every face and sub-step of the layer at 2^refinement sub-steps. Collective.
  double noise_max(int refinement, std::int64_t layer);
  // dw_block_ [count, faces] <- dW of the sub-steps first .. first + count - 1 of the path at that refinement.
  void block_noise(int refinement, std::int64_t first, std::int64_t count);
  BrownianPath& path(int refinement);
  // The half spectrum of a real array of M values.
  void forward(const double* in, std::vector<std::complex<double>>& out);
  // Circular convolution out[f] = sum_j kernel[(f - j) mod M] rho[j] from the two spectra.
  void convolve(const std::vector<std::complex<double>>& kernel_hat, const std::vector<std::complex<double>>& rho_hat,
                std::vector<double>& out);

  MPI_Comm comm_;
  CircleGridParams params_;
  std::unique_ptr<GaussianField> field_;
  double width_;  // dtheta = 2 pi / M
  OwnedDM da_;  // the PETSc objects go in reverse order: the scatter, the vectors, then the DM
  OwnedVec rho_, predictor_, local_, all_;
  OwnedVecScatter to_all_;
  PetscInt first_cell_ = 0, cells_local_ = 0;  // owned cells [first, first + count)
  std::int64_t first_face_ = 0, faces_ = 0;    // faces f (right face of cell f, at (f + 1) dtheta) of this rank
  std::vector<double> psi_;                    // [faces, K, 2] tangential field modes at the faces
  static constexpr std::int64_t kBlock = 64;             // sub-steps per block of the CFL check
  std::vector<double> increments_, dw_block_;  // [kBlock, K, 2], [kBlock, faces]
  static constexpr std::int64_t kKeptNoise = std::int64_t{1} << 22;  // doubles (32 MiB) of dW kept for the step
  std::vector<double> kept_noise_;             // [sub-steps, faces] of the accepted refinement
  bool kept_ = false;
  int refinement_ = 0;                          // r of the last layer
  std::vector<std::unique_ptr<BrownianPath>> paths_;  // by refinement r
  std::vector<double> rho_all_, u_, dw_, k1_, k2_, conv_z_, conv_t_, flux_;
  std::vector<std::complex<double>> rho_hat_;
  // FFT workspace: a real array of M and its half spectrum; kernels of the attention (Z, T) and of E_beta.
  double* fft_real_ = nullptr;
  fftw_complex* fft_spec_ = nullptr;
  fftw_plan forward_ = nullptr, backward_ = nullptr;
  std::vector<std::complex<double>> z_hat_, t_hat_, energy_hat_;
  double energy_beta_ = -1;
  std::int64_t last_substeps_ = 1;
  bool snapshots_begun_ = false;  // /meanfield/theta written, /meanfield/density has rows
};

}  // namespace tokdyn
