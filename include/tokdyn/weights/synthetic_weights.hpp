// Synthetic layer weights with a prescribed spectrum (the controlled experiments of the power-method
// claims): F = U P T P^T U^T with T quasi-triangular (known eigenvalues), U orthogonal, P a permutation.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "tokdyn/core/deck/key_table.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// Spectrum kinds (synthetic.kind). Outliers are the leading eigenvalues, the bulk lies in a disk below.
//   dominant:   lambda_k = lambda1 (1 - gap)^{k-1}, k = 1..outliers (strictly dominant real lambda_1)
//   degenerate: lambda_2 = lambda1 (1 - degeneracy), then lambda_k = lambda_2 (1 - gap)^{k-2}
//   complex:    lambda_{1,2} = lambda1 e^{+-i angle}, then lambda_k = lambda1 (1 - gap)^{k-2}, k >= 3
//   symmetric:  dominant's eigenvalues, real bulk, T diagonal: F symmetric
//   random:     no prescribed spectrum: O, V with iid N(0, 1/d) entries (circular law, radius ~ 1)
// Bulk: the other eigenvalues uniform in the disk (real interval for symmetric) of radius
// bulk * |smallest outlier|, as conjugate pairs. T's strictly upper part: a band of width 2 with
// N(0, nonnormality^2 lambda1^2 / 2) entries (non-normality; the eigenvalues stay exact).
// Weights: V = W orthogonal (another Householder product), O = F W^T, so F = O V to round-off and
// V^{-T} = V; Q, K iid N(0, qk_scale^2 / d). Every row is a pure function of (seed, layer, row): a rank
// generates only its rows, in O(reflectors d) each, and layer-varying weights draw per layer.
struct SyntheticSpec {
  std::string kind = "dominant";
  int d = 64, heads = 1, reflectors = 8, outliers = 3;
  std::int64_t layers = 12;
  bool shared = true;
  double lambda1 = 1, gap = 0.3, angle = 0.5, degeneracy = 1e-3, bulk = 0.8, nonnormality = 0.1, qk_scale = 1;
  std::uint64_t seed = 1;
};

class SyntheticWeights final : public WeightSource {
 public:
  explicit SyntheticWeights(const SyntheticSpec& spec);  // InputError on inconsistent keys
  // The [synthetic] keys, bound to SyntheticSpec's members.
  static const KeyTable<SyntheticSpec>& keys();

  int d() const override { return spec_.d; }
  int heads() const override { return spec_.heads; }
  int head_dim() const override { return spec_.d / spec_.heads; }
  std::int64_t layers() const override { return spec_.layers; }
  bool shared() const override { return spec_.shared; }
  double score_scale() const override;
  LayerWeights layer(std::int64_t t) const override;
  std::vector<double> output_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override;
  std::vector<double> value_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override;
  bool has_embedding() const override { return false; }
  std::vector<double> embedding(const std::vector<std::int64_t>& ids) const override;
  std::string describe() const override;

  // The prescribed eigenvalues of F_t, sorted by decreasing modulus (pairs: +im first); empty for random.
  std::vector<std::complex<double>> eigenvalues(std::int64_t t) const;
  // Rows [begin, end) of F_t [d, d] itself (as O V would give, without the round-off of the product).
  std::vector<double> matrix_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const;

 private:
  struct Layer;  // eigenbasis reflectors, permutation and T of one layer
  std::shared_ptr<const Layer> layer_data(std::int64_t t) const;
  std::vector<double> gaussian_rows(std::int64_t t, int which, std::int64_t begin, std::int64_t end, double sd) const;

  SyntheticSpec spec_;
  mutable std::shared_ptr<const Layer> cache_;  // the last layer generated
};


}  // namespace tokdyn
