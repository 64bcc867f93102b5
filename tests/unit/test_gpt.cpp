// The GPT of train/ (doc/science.md section 10.3): its hand-written gradient against central differences
// for every parameter tensor (GELU and PReLU, with and without the symmetry-breaking biases), float
// against double, and the two exact facts about the biases: a key bias cancels in the softmax, and b_V
// moves each head's output by W_O b_V (the same loss as adding W_O b_V to the projection's bias).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "tokdyn/core/random.hpp"
#include "tokdyn/train/gpt.hpp"

namespace tokdyn {
namespace {

GptConfig tiny(bool prelu) {
  GptConfig c;
  c.vocab = 7, c.context = 6, c.layers = 2, c.heads = 2, c.channels = 8, c.prelu = prelu;
  return c;
}

std::vector<double> random_theta(const GptLayout& layout, std::uint64_t seed) {
  std::vector<double> theta(layout.size);
  RandomStream(seed, Purpose::test).normals(0, 0, theta.data(), theta.size());
  for (double& v : theta) v *= 0.4;
  return theta;
}

SymmetryBiases random_biases(const GptConfig& c, bool q, bool k, bool v) {
  SymmetryBiases b;
  const std::size_t n = static_cast<std::size_t>(c.layers) * c.head_dim();
  std::vector<double> z(3 * n);
  RandomStream(11, Purpose::test).normals(1, 0, z.data(), z.size());
  if (q) b.query.assign(z.begin(), z.begin() + n);
  if (k) b.key.assign(z.begin() + n, z.begin() + 2 * n);
  if (v) b.value.assign(z.begin() + 2 * n, z.end());
  return b;
}

const int kTokens[5] = {3, 0, 6, 2, 2}, kTargets[5] = {0, 6, 2, 2, 5};

void gradient_check(bool prelu, const SymmetryBiases& biases) {
  const GptConfig c = tiny(prelu);
  Gpt<double> model(c);
  std::vector<double> theta = random_theta(model.layout(), prelu ? 2 : 3), grad(theta.size(), 0.0);
  model.sequence(theta.data(), kTokens, kTargets, 5, biases, grad.data(), 1.0);
  double worst = 0;
  for (const ParameterBlock& b : model.layout().blocks()) {
    double diff = 0, size = 0;
    for (std::size_t k = b.begin; k < b.begin + b.size; ++k) {
      const double keep = theta[k], h = 1e-5;
      theta[k] = keep + h;
      const double up = model.sequence(theta.data(), kTokens, kTargets, 5, biases, nullptr, 1.0);
      theta[k] = keep - h;
      const double down = model.sequence(theta.data(), kTokens, kTargets, 5, biases, nullptr, 1.0);
      theta[k] = keep;
      const double fd = (up - down) / (2 * h);
      diff += (grad[k] - fd) * (grad[k] - fd), size += fd * fd;
    }
    const double rel = std::sqrt(diff / std::max(size, 1e-300));
    worst = std::max(worst, rel);
    EXPECT_LT(rel, 1e-6) << b.name << (prelu ? " (PReLU)" : " (GELU)");
  }
  std::printf("gradient against central differences (h = 1e-5), %s%s: worst tensor %.2e\n", prelu ? "PReLU" : "GELU",
              biases.query.empty() ? "" : ", with b_Q, b_K, b_V", worst);
}

TEST(Gpt, GradientGelu) { gradient_check(false, {}); }
TEST(Gpt, GradientPrelu) { gradient_check(true, {}); }
TEST(Gpt, GradientWithBiases) {
  gradient_check(false, random_biases(tiny(false), true, true, true));
  gradient_check(true, random_biases(tiny(true), true, true, true));
}

TEST(Gpt, FloatAgreesWithDouble) {
  const GptConfig c = tiny(true);
  Gpt<double> d(c);
  Gpt<float> f(c);
  const std::vector<double> theta = random_theta(d.layout(), 4);
  const std::vector<float> theta_f(theta.begin(), theta.end());
  const double ld = d.sequence(theta.data(), kTokens, kTargets, 5, {}, nullptr, 1.0);
  const double lf = f.sequence(theta_f.data(), kTokens, kTargets, 5, {}, nullptr, 1.0);
  std::printf("loss float64 %.12f, float32 parameters %.12f (relative %.1e)\n", ld, lf, std::abs(lf / ld - 1));
  EXPECT_LT(std::abs(lf / ld - 1), 1e-5);
}

TEST(Gpt, KeyBiasCancelsValueBiasShiftsByWoBv) {
  const GptConfig c = tiny(false);
  Gpt<double> model(c);
  std::vector<double> theta = random_theta(model.layout(), 5);
  const double plain = model.sequence(theta.data(), kTokens, kTargets, 5, {}, nullptr, 1.0);
  const double keyed = model.sequence(theta.data(), kTokens, kTargets, 5, random_biases(c, false, true, false),
                                      nullptr, 1.0);
  EXPECT_NEAR(keyed, plain, 1e-13 * plain);
  // b_V: head h's output y_h gains b_V (its attention sums to 1), the block W_O b_V (b_V tiled over heads).
  const SymmetryBiases bv = random_biases(c, false, false, true);
  const double valued = model.sequence(theta.data(), kTokens, kTargets, 5, bv, nullptr, 1.0);
  const int C = c.channels, D = c.head_dim();
  for (int l = 0; l < c.layers; ++l) {
    const GptLayout::Layer& w = model.layout().layer[l];
    for (int r = 0; r < C; ++r)
      for (int col = 0; col < C; ++col) theta[w.projb + r] += theta[w.projw + r * C + col] * bv.value[l * D + col % D];
  }
  const double shifted = model.sequence(theta.data(), kTokens, kTargets, 5, {}, nullptr, 1.0);
  std::printf("loss %.15f; with a key bias %.15f; with b_V %.15f, with W_O b_V in the bias instead %.15f\n", plain,
              keyed, valued, shifted);
  EXPECT_NEAR(valued, shifted, 1e-13 * valued);
  EXPECT_GT(std::abs(valued - plain), 1e-3);
}

}  // namespace
}  // namespace tokdyn
