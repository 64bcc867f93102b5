// Gaussian vector fields with (approximately) the zonal kernel of the MLP noise,
//   dW(x) = sum_k sigma_k(x) dB^k,  sum_k sigma_k(x) sigma_k(y) ~ kappa(<x, y>),  B^k Brownian in R^d,
// in finite representations chosen by name: truncated Karhunen-Loeve (Fourier) modes on S^1, or
// quenched random features on any S^{d-1}. Every rank builds the same modes from the seed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/core/deck/registry.hpp"
#include "tokdyn/noise/mlp_kernel.hpp"

namespace tokdyn {

class MemoryEstimate;

struct FieldParams {
  std::string style = "features";  // a name of field_styles()
  MlpKernel kernel{nullptr, 2};
  double kl_tolerance = 1e-6;  // KL: neglected variance / kappa(1)
  std::int64_t features = 1024; // random features: M
  std::uint64_t seed = 1;
};

class GaussianField {
 public:
  virtual ~GaussianField() = default;
  virtual std::int64_t modes() const = 0;  // K
  // phi[i, k] = sigma_k(x_i); x: [n, d], phi: [n, K].
  virtual void evaluate(const double* x, std::int64_t n, double* phi) const = 0;
  // v[i] = sum_k sigma_k(x_i)^2 and grad_v[i, :] its gradient [n, d] (the Ito correction of the
  // Stratonovich noise P_x dW(x) is (1/4) P_x grad v - (d - 1)/2 v x).
  virtual void variance(const double* x, std::int64_t n, double* v, double* grad_v) const = 0;
  // True when sum_k sigma_k(x)^2 is the same at every x (zonal): the Ito drift is then purely radial.
  virtual bool constant_variance() const = 0;
  virtual std::unique_ptr<GaussianField> clone() const = 0;
  int dimension() const { return d_; }

 protected:
  explicit GaussianField(int d) : d_(d) {}
  int d_;
};

using FieldRegistry = KeyedRegistry<GaussianField, FieldParams, const FieldParams&>;
const FieldRegistry& field_styles();

// The field of params.style.
std::unique_ptr<GaussianField> make_field(const FieldParams& params);
// The field's arrays per rank for n_local tokens, for the memory check.
void field_memory(MemoryEstimate& memory, const FieldParams& params, std::int64_t n_local, int d);

// KL modes on S^1 (d = 2): kappa(cos t) = c_0 + sum_n c_n cos(n t); modes sqrt(c_0), sqrt(c_n) cos(n theta),
// sqrt(c_n) sin(n theta) for n <= K, with K the first order whose neglected variance is below tolerance.
class FourierField final : public GaussianField {
 public:
  explicit FourierField(const FieldParams& params);
  static const KeyTable<FieldParams>& keys();  // noise.kl_tolerance
  std::int64_t modes() const override { return 1 + 2 * order_; }
  void evaluate(const double* x, std::int64_t n, double* phi) const override;
  void variance(const double* x, std::int64_t n, double* v, double* grad_v) const override;
  bool constant_variance() const override { return true; }
  std::unique_ptr<GaussianField> clone() const override { return std::make_unique<FourierField>(*this); }
  const std::vector<double>& coefficients() const { return c_; }  // c_0 .. c_K
  double neglected_variance() const { return neglected_; }

 private:
  std::int64_t order_ = 0;
  std::vector<double> c_, root_c_;
  double neglected_ = 0;
};

// Quenched random features: sigma_k(x) = sigma(U_k x / sqrt d + b_k) / sqrt M (k < M), plus sigma_W for
// the output bias; U_k ~ N(0, I_d) and b_k ~ N(0, sigma_U^2) drawn once from the seed.
class RandomFeatureField final : public GaussianField {
 public:
  explicit RandomFeatureField(const FieldParams& params);
  static const KeyTable<FieldParams>& keys();  // noise.features
  std::int64_t modes() const override { return m_ + 1; }
  void evaluate(const double* x, std::int64_t n, double* phi) const override;
  void variance(const double* x, std::int64_t n, double* v, double* grad_v) const override;
  bool constant_variance() const override { return false; }
  std::unique_ptr<GaussianField> clone() const override { return std::make_unique<RandomFeatureField>(*this); }

 private:
  const Activation* act_;
  std::int64_t m_;
  double sigma_w_;
  std::vector<double> u_, b_;  // [M, d], [M]
};

}  // namespace tokdyn
