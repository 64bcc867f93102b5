// Synthetic layer weights: the prescribed spectrum is what LAPACK finds in F = O V, V is orthogonal,
// row slabs equal the whole layer's rows, shared and layer-varying draws behave as documented.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/spectral/dense_eigen.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/weights/synthetic_weights.hpp"

namespace tokdyn {
namespace {

SyntheticSpec spec_of(const std::string& kind, int d = 40) {
  SyntheticSpec s;
  s.kind = kind;
  s.d = d;
  s.heads = 4;
  s.layers = 3;
  s.outliers = 4;
  s.lambda1 = -1.7;
  return s;
}

TEST(SyntheticWeights, PrescribedSpectrumIsFoundByLapack) {
  for (const std::string kind : {"dominant", "degenerate", "complex", "symmetric"}) {
    const SyntheticWeights w(spec_of(kind));
    const LayerWeights layer = w.layer(1);
    const std::vector<double> f = layer_matrix(layer);
    const DenseEigen e = dense_eigen(w.d(), f.data());
    const auto want = w.eigenvalues(1);
    ASSERT_EQ(static_cast<int>(want.size()), w.d());
    // Leading eigenvalues are well conditioned (separated): 1e-12 of |lambda_1|. The bulk is clustered
    // and T is non-normal, so its eigenvalues move more under round-off: 1e-8.
    for (int k = 0; k < w.d(); ++k) {
      const double tol = (k < 4 ? 1e-12 : 1e-8) * 1.7;
      EXPECT_NEAR(e.re[k], want[k].real(), tol) << kind << " " << k;
      EXPECT_NEAR(e.im[k], want[k].imag(), tol) << kind << " " << k;
    }
    if (kind == "dominant") {
      EXPECT_NEAR(std::abs(want[1]) / std::abs(want[0]), 0.7, 1e-15);
    } else if (kind == "degenerate") {
      EXPECT_NEAR(std::abs(want[1]) / std::abs(want[0]), 1 - 1e-3, 1e-15);
    } else if (kind == "complex") {
      EXPECT_NEAR(std::arg(want[0]), std::numbers::pi - 0.5, 1e-14);  // lambda1 < 0
    }
    // F = O V equals the matrix built directly (V orthogonal: O = F V^T).
    const std::vector<double> direct = w.matrix_rows(1, 0, w.d());
    for (std::size_t i = 0; i < f.size(); ++i) ASSERT_NEAR(f[i], direct[i], 1e-13) << kind;
    if (kind == "symmetric") {
      for (int i = 0; i < w.d(); ++i)
        for (int j = 0; j < i; ++j) ASSERT_NEAR(f[i * w.d() + j], f[j * w.d() + i], 1e-14);
    }
  }
}

TEST(SyntheticWeights, ValueIsOrthogonalAndSlabsEqualTheLayer) {
  const SyntheticWeights w(spec_of("complex"));
  const int d = w.d();
  const LayerWeights layer = w.layer(2);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      double s = 0;
      for (int k = 0; k < d; ++k) s += layer.value[i * d + k] * layer.value[j * d + k];
      ASSERT_NEAR(s, i == j ? 1.0 : 0.0, 1e-14);
    }
  const std::vector<double> o = w.output_rows(2, 5, 9), v = w.value_rows(2, 5, 9);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < d; ++j) {
      EXPECT_EQ(o[i * d + j], layer.output[(5 + i) * d + j]);
      EXPECT_EQ(v[i * d + j], layer.value[(5 + i) * d + j]);
    }
  EXPECT_EQ(layer.heads, 4);
  EXPECT_EQ(layer.head_dim, 10);
  EXPECT_DOUBLE_EQ(layer.score_scale, 1 / std::sqrt(10.0));
}

TEST(SyntheticWeights, SharedRepeatsLayerVaryingDraws) {
  SyntheticSpec s = spec_of("dominant", 12);
  const SyntheticWeights shared(s);
  EXPECT_EQ(shared.layer(0).output, shared.layer(2).output);
  EXPECT_EQ(shared.layer(0).query, shared.layer(2).query);
  s.shared = false;
  const SyntheticWeights varying(s);
  EXPECT_NE(varying.layer(0).output, varying.layer(2).output);
  EXPECT_NE(varying.layer(0).query, varying.layer(2).query);
  EXPECT_EQ(varying.layer(0).output, shared.layer(0).output);  // layer 0 is keyed like the shared one
  s.kind = "random";
  const SyntheticWeights random(s);
  EXPECT_TRUE(random.eigenvalues(0).empty());
  EXPECT_NE(random.layer(0).value, random.layer(1).value);
}

TEST(SyntheticWeights, InconsistentSpecsAreInputErrors) {
  SyntheticSpec s = spec_of("dominant");
  s.heads = 7;
  EXPECT_THROW(SyntheticWeights{s}, InputError);
  s = spec_of("dominant");
  s.outliers = 41;
  EXPECT_THROW(SyntheticWeights{s}, InputError);
  const SyntheticWeights w(spec_of("dominant"));
  EXPECT_THROW(w.layer(3), InputError);
  EXPECT_THROW(w.embedding({1}), InputError);
}

}  // namespace
}  // namespace tokdyn
