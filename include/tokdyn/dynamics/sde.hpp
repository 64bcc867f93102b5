// The limit SDE of doc/science.md section 3 with common noise, as schemes chosen by name:
//   Ito:           dX = ( P_X a Attn + (1/4) P_X grad v - (d-1)/2 v X ) dt + sum_k sigma_k(X) P_X dB^k
//   Stratonovich:  dX = P_X a Attn dt + sum_k sigma_k(X) P_X o dB^k
// with v(x) = sum_k sigma_k(x)^2 (= kappa(1) for the exact kernel, when the correction is the radial drift
// -kappa(1)(d-1)/2 X of doc/science.md section 3.1). The field increments come from one BrownianPath
// shared by all tokens.
#pragma once

#include <memory>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/dynamics/dynamics.hpp"
#include "tokdyn/noise/brownian_path.hpp"
#include "tokdyn/noise/gaussian_field.hpp"

namespace tokdyn {

class DeckSchema;

struct SdeParams {
  std::int64_t n = 64;
  int d = 2;
  std::int64_t steps = 100;  // L
  double horizon = 1;        // T
  double factor = 1;         // attention factor a
  bool project = false;      // renormalise onto the sphere after each step (EM, Heun)
  bool radial_drift = true;  // Ito: include the correction (off only to measure what it does)
  bool noise = true;
};

// What a scheme is built from; factories take ownership of the pointers.
struct SdeSetup {
  SdeParams params;
  std::int64_t n_local = 0;
  std::unique_ptr<Attention> attention;  // null: no attention
  std::unique_ptr<GaussianField> field;  // null: no noise
  std::uint64_t seed = 1;
};

class SdeScheme : public Dynamics {
 public:
  explicit SdeScheme(SdeSetup& setup);
  double time(std::int64_t layer) const override { return layer * dt(); }
  double work_per_step() const override;
  std::string work_unit() const override { return attention_ ? "pairs" : "token-steps"; }
  double dt() const { return params_.horizon / static_cast<double>(params_.steps); }
  std::int64_t modes() const { return field_ ? field_->modes() : 0; }
  Attention* attention() const override { return attention_.get(); }

 protected:
  // out = P_x a Attn(x) [n_local, d] (zero without attention); the attention pass through statistics when
  // given (StepStatistics). Collective.
  void tangent_drift(const double* x, double* out, StepStatistics* statistics = nullptr);
  // out = sum_k sigma_k(x) dB^k [n_local, d] for this step's increments dB [K, d]; projected when asked.
  void field_increment(const double* x, const double* dB, double* out, bool project);
  // out = (1/4) P_x grad v - (d-1)/2 v x, the Ito correction.
  void ito_correction(const double* x, double* out) const;
  // This step's increments [K, d].
  const std::vector<double>& increments(std::int64_t step);

  SdeParams params_;
  std::int64_t n_local_;
  std::unique_ptr<Attention> attention_;
  std::unique_ptr<GaussianField> field_;
  std::unique_ptr<BrownianPath> path_;
  std::vector<double> db_, phi_, work_;
  std::vector<double> block_;       // [steps, K d]: the increments of steps block_first_ ..
  std::int64_t block_first_ = 0;
};

using SdeRegistry = Registry<SdeScheme, SdeSetup&>;
const SdeRegistry& sde_schemes();

}  // namespace tokdyn
