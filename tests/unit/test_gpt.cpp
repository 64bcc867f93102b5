// The GPT of train/ (doc/science.md section 10.3): its hand-written gradient against central differences
// for every parameter tensor (GELU and PReLU, with and without the symmetry-breaking biases), float
// against double, the two exact facts about the biases (a key bias cancels in the softmax; b_V moves each
// head's output by W_O b_V, the same loss as adding W_O b_V to the projection's bias) and the torque
// identity of the rotations of each head.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "tokdyn/core/numerics/random.hpp"
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

// A batch is its sequences one after another: three sequences (PReLU, with every bias) through batch()
// against the sum of three sequence() calls, loss and gradient to 1e-13 of their size (the sums differ only in
// their order), and the attention inputs row by row.
TEST(Gpt, BatchEqualsItsSequences) {
  const GptConfig c = tiny(true);
  Gpt<double> model(c);
  const std::vector<double> theta = random_theta(model.layout(), 8);
  const SymmetryBiases biases = random_biases(c, true, true, true);
  const int seqs[3][6] = {{3, 0, 6, 2, 2, 5}, {1, 1, 4, 0, 6, 3}, {5, 2, 2, 6, 1, 0}};
  const int* tokens[3] = {seqs[0], seqs[1], seqs[2]};
  const int* targets[3] = {seqs[0] + 1, seqs[1] + 1, seqs[2] + 1};
  std::vector<double> grad(theta.size(), 0.0), one(theta.size(), 0.0);
  const double loss = model.batch(theta.data(), tokens, targets, 3, 5, biases, grad.data(), 0.5);
  const std::vector<double> inputs = model.attention_input(1);  // [3 x 5, C]
  double sum = 0;
  for (int b = 0; b < 3; ++b) {
    sum += model.sequence(theta.data(), tokens[b], targets[b], 5, biases, one.data(), 0.5);
    const std::vector<double>& alone = model.attention_input(1);  // [5, C]
    for (std::size_t i = 0; i < alone.size(); ++i)
      EXPECT_NEAR(inputs[b * alone.size() + i], alone[i], 1e-13) << "sequence " << b << ", entry " << i;
  }
  EXPECT_NEAR(loss, sum, 1e-13 * sum);
  double diff = 0, size = 0;
  for (std::size_t k = 0; k < grad.size(); ++k) diff = std::max(diff, std::abs(grad[k] - one[k])), size = std::max(size, std::abs(one[k]));
  EXPECT_LT(diff, 1e-13 * size);
}

// Float parameters keep float activations end to end (sums over rows in double). Against the double path on
// the same parameters, normwise: each of the 2L + 1 products of the forward (length at most K = 4C) loses at most
// K u (u = 2^-24) relatively, and the backward as many again, so |g_f - g_d| / |g_d| <= 2 (2L + 1) K u; the loss
// within (2L + 1) K u. Both above 1e-12 too: the float path is taken. Two sizes: the tiny GPT and C = 64, n = 32.
TEST(Gpt, FloatAgreesWithDouble) {
  GptConfig wide;
  wide.vocab = 40, wide.context = 32, wide.layers = 2, wide.heads = 4, wide.channels = 64;
  for (const GptConfig& c : {tiny(true), tiny(false), wide}) {
    Gpt<double> d(c);
    Gpt<float> f(c);
    std::vector<double> theta = random_theta(d.layout(), 4);
    for (double& v : theta) v *= c.channels > 8 ? 0.25 : 1.0;  // O(1) pre-activations at C = 64 too
    const std::vector<float> theta_f(theta.begin(), theta.end());
    const std::vector<double> theta_r(theta_f.begin(), theta_f.end());  // the float parameters, in double
    const int n = std::min(c.context, 32);
    std::vector<int> seq(n + 1);
    for (int t = 0; t <= n; ++t) seq[t] = (7 * t * t + 3 * t + 1) % c.vocab;
    std::vector<double> gd(theta.size(), 0.0);
    std::vector<float> gf(theta.size(), 0.0f);
    const double ld = d.sequence(theta_r.data(), seq.data(), seq.data() + 1, n, {}, gd.data(), 1.0 / n);
    const double lf = f.sequence(theta_f.data(), seq.data(), seq.data() + 1, n, {}, gf.data(), 1.0 / n);
    double diff = 0, size = 0;
    for (std::size_t k = 0; k < gd.size(); ++k) diff += (gf[k] - gd[k]) * (gf[k] - gd[k]), size += gd[k] * gd[k];
    const double g_rel = std::sqrt(diff / size), l_rel = std::abs(lf / ld - 1);
    const double products = 2 * c.layers + 1, ku = 4.0 * c.channels * std::ldexp(1.0, -24);
    std::printf("C = %d, n = %d: float against double, loss %.1e (bound %.1e), gradient %.1e (bound %.1e)\n", c.channels,
                n, l_rel, products * ku, g_rel, 2 * products * ku);
    EXPECT_LT(l_rel, products * ku);
    EXPECT_LT(g_rel, 2 * products * ku);
    EXPECT_GT(g_rel, 1e-12);
  }
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

namespace tokdyn {
namespace {

// Torque identity (doc/science.md section 10.2): for a generator A = e_p e_q^T - e_q e_p^T of head h,
// delta_QK theta rotates the head's rows of W_Q, W_K and its c_q, c_k by A; delta_VO rotates W_V, c_v by A
// and takes -W_O A on the head's columns of W_O. Without biases <grad F, delta theta> = 0; with b_Q
// (b_V) it equals -<sum_t dF/dq_t, A b_Q> (-<sum_t dF/dv_t, A b_V>), and sum_t dF/dq_t is the gradient of
// the learned c_q (c_v) of the head, which sees q the same way. A key bias gives c_k no gradient at all.
TEST(Gpt, TorqueIdentity) {
  const GptConfig c = tiny(false);
  Gpt<double> model(c);
  const std::vector<double> theta = random_theta(model.layout(), 7);
  const int C = c.channels, D = c.head_dim();
  for (const int with : {0, 1}) {
    const SymmetryBiases b = random_biases(c, with != 0, with != 0, with != 0);
    std::vector<double> grad(theta.size(), 0.0);
    model.sequence(theta.data(), kTokens, kTargets, 5, b, grad.data(), 1.0);
    double gnorm = 0, worst = 0;
    for (double g : grad) gnorm += g * g;
    gnorm = std::sqrt(gnorm);
    for (int l = 0; l < c.layers; ++l) {
      const GptLayout::Layer& w = model.layout().layer[l];
      for (int h = 0; h < c.heads; ++h)
        for (int p = 0; p < D; ++p)
          for (int q = p + 1; q < D; ++q) {
            // A e_q = e_p, A e_p = -e_q: (A M)_{p .} = M_{q .}, (A M)_{q .} = -M_{p .}.
            auto rotate_rows = [&](std::size_t base, int cols, std::vector<double>& delta) {
              for (int k = 0; k < cols; ++k) {
                delta[base + (h * D + p) * cols + k] += theta[base + (h * D + q) * cols + k];
                delta[base + (h * D + q) * cols + k] -= theta[base + (h * D + p) * cols + k];
              }
            };
            std::vector<double> qk(theta.size(), 0.0), vo(theta.size(), 0.0);
            rotate_rows(w.qkvw, C, qk), rotate_rows(w.qkvw + C * C, C, qk);   // W_Q, W_K rows of head h
            rotate_rows(w.qkvb, 1, qk), rotate_rows(w.qkvb + C, 1, qk);       // c_q, c_k
            rotate_rows(w.qkvw + 2 * C * C, C, vo), rotate_rows(w.qkvb + 2 * C, 1, vo);  // W_V, c_v
            for (int r = 0; r < C; ++r) {  // -(W_O A) on columns h D + p, h D + q: (W_O A)_{r p} = -W_O{r q}
              vo[w.projw + r * C + h * D + p] += theta[w.projw + r * C + h * D + q];
              vo[w.projw + r * C + h * D + q] -= theta[w.projw + r * C + h * D + p];
            }
            double tqk = 0, tvo = 0;
            for (std::size_t k = 0; k < theta.size(); ++k) tqk += grad[k] * qk[k], tvo += grad[k] * vo[k];
            // Predicted: -<grad c_{q,h}, A b_Q>, (A b)_p = b_q, (A b)_q = -b_p.
            auto predicted = [&](std::size_t bias, const std::vector<double>& bvec) {
              if (bvec.empty()) return 0.0;
              const double* gb = &grad[bias + h * D];
              return -(gb[p] * bvec[l * D + q] - gb[q] * bvec[l * D + p]);
            };
            const double pqk = predicted(w.qkvb, b.query), pvo = predicted(w.qkvb + 2 * C, b.value);
            worst = std::max({worst, std::abs(tqk - pqk) / gnorm, std::abs(tvo - pvo) / gnorm});
            if (with) {
              EXPECT_GT(std::abs(pqk), 1e-6 * gnorm);  // the biases do exert a torque
            }
          }
      if (with) {
        for (int e = 0; e < C; ++e) EXPECT_LT(std::abs(grad[w.qkvb + C + e]), 1e-12 * gnorm);  // c_k: no gradient
      }
    }
    std::printf("torque identity %s: max |<grad, delta_A theta> - predicted| / |grad| = %.2e\n",
                with ? "with b_Q, b_K, b_V" : "without biases", worst);
    EXPECT_LT(worst, 1e-12);
  }
}

}  // namespace
}  // namespace tokdyn
