// The pieces of tokdyn train around the GPT: the deck's head vectors, the symmetry-breaking biases' laws
// and keys, the initial parameters' laws and the key-bias alignment against a direct computation and
// against its closed-form null.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/train/key_alignment.hpp"
#include "tokdyn/train/symmetry_biases.hpp"

namespace tokdyn {
namespace {

std::vector<double> step_normals(std::uint64_t step, std::size_t n) {
  std::vector<double> v(n);
  RandomStream(5, Purpose::test).normals(step, 0, v.data(), n);
  return v;
}

// Mean and sample standard deviation of v[begin, end).
std::pair<double, double> moments(const std::vector<double>& v, std::size_t begin, std::size_t end) {
  double s1 = 0, s2 = 0;
  for (std::size_t i = begin; i < end; ++i) s1 += v[i], s2 += v[i] * v[i];
  const double n = static_cast<double>(end - begin), m = s1 / n;
  return {m, std::sqrt((s2 - n * m * m) / (n - 1))};
}

TEST(HeadVector, OneValueListOrLinspace) {
  EXPECT_EQ(parse_head_vector("k", "0.3", 4), std::vector<double>(4, 0.3));
  EXPECT_EQ(parse_head_vector("k", "1, 2, 3", 3), (std::vector<double>{1, 2, 3}));
  const std::vector<double> l = parse_head_vector("k", "0.12..0.08", 5);  // numpy.linspace(0.12, 0.08, 5)
  ASSERT_EQ(l.size(), 5u);
  for (int e = 0; e < 5; ++e) EXPECT_NEAR(l[e], 0.12 - 0.01 * e, 1e-15);
  EXPECT_EQ(parse_head_vector("k", "2..7", 1), std::vector<double>{2});
  EXPECT_THROW(parse_head_vector("k", "1, 2", 3), InputError);
  EXPECT_THROW(parse_head_vector("k", "1..2..3", 3), InputError);
  EXPECT_THROW(parse_head_vector("k", "x", 3), InputError);
}

TEST(SymmetryBiases, KeyedByStepAndLayerWithTheirLaw) {
  SymmetryBiasLaws laws;
  laws.query = {true, {0.5, -0.2, 0.0}, {0.05, 0.1, 0.15}};
  laws.value = {true, {0.1, 0.1, 0.1}, {0.3, 0.3, 0.3}};
  const int L = 2, D = 3;
  const SymmetryBiases a = sample_biases(laws, L, 9, 17), b = sample_biases(laws, L, 9, 17);
  EXPECT_EQ(a.query, b.query);
  EXPECT_EQ(a.value, b.value);
  EXPECT_TRUE(a.key.empty());
  ASSERT_EQ(a.query.size(), static_cast<std::size_t>(L * D));
  EXPECT_NE(a.query, sample_biases(laws, L, 9, 18).query);
  EXPECT_NE(a.query, sample_biases(laws, L, 10, 17).query);
  EXPECT_NE(std::vector<double>(a.query.begin(), a.query.begin() + D), std::vector<double>(a.query.begin() + D, a.query.end()));
  EXPECT_EQ(mean_biases(laws, L).query, (std::vector<double>{0.5, -0.2, 0.0, 0.5, -0.2, 0.0}));
  // Over S steps each entry's sample mean lies within 5 standard errors of mu, its spread within 5 of sigma.
  const int S = 4000;
  std::vector<double> q(static_cast<std::size_t>(S) * L * D);
  for (int s = 0; s < S; ++s) {
    const SymmetryBiases d = sample_biases(laws, L, 3, s);
    std::copy(d.query.begin(), d.query.end(), q.begin() + static_cast<std::ptrdiff_t>(s) * L * D);
  }
  for (int l = 0; l < L; ++l)
    for (int e = 0; e < D; ++e) {
      std::vector<double> x(S);
      for (int s = 0; s < S; ++s) x[s] = q[(static_cast<std::size_t>(s) * L + l) * D + e];
      const auto [m, sd] = moments(x, 0, S);
      const double sigma = laws.query.sigma[e];
      EXPECT_NEAR(m, laws.query.mu[e], 5 * sigma / std::sqrt(S)) << l << " " << e;
      EXPECT_NEAR(sd, sigma, 5 * sigma / std::sqrt(2.0 * S)) << l << " " << e;
    }
}

TEST(InitialGpt, GptTwoLawsFromTheSeed) {
  GptConfig c;
  c.vocab = 50, c.context = 40, c.layers = 3, c.heads = 4, c.channels = 64, c.prelu = true;
  GptInit init;
  const GptLayout y(c);
  const std::vector<double> theta = initial_gpt<double>(c, init, 7);
  EXPECT_EQ(theta, initial_gpt<double>(c, init, 7));
  EXPECT_NE(theta, initial_gpt<double>(c, init, 8));
  const std::vector<float> single = initial_gpt<float>(c, init, 7);
  for (std::size_t k = 0; k < theta.size(); ++k) ASSERT_EQ(single[k], static_cast<float>(theta[k])) << k;
  auto expect_law = [&](std::size_t begin, std::size_t end, double mean, double sd, const char* what) {
    const auto [m, s] = moments(theta, begin, end);
    const double n = static_cast<double>(end - begin);
    EXPECT_NEAR(m, mean, 5 * sd / std::sqrt(n)) << what;
    EXPECT_NEAR(s, sd, 5 * sd / std::sqrt(2 * n)) << what;
  };
  expect_law(y.wte, y.wpe, 0, init.std, "wte");
  for (const GptLayout::Layer& l : y.layer) {
    expect_law(l.qkvw, l.qkvb, 0, init.std, "c_attn.weight");
    expect_law(l.projw, l.projb, 0, init.std / std::sqrt(2.0 * c.layers), "attn.c_proj.weight");
    expect_law(l.fcprojw, l.fcprojb, 0, init.std / std::sqrt(2.0 * c.layers), "mlp.c_proj.weight");
    expect_law(l.fcw, l.fcb, 0, init.std, "c_fc.weight");
    for (std::size_t k = l.ln1w; k < l.ln1b; ++k) EXPECT_EQ(theta[k], 1.0);
    for (std::size_t k = l.qkvb; k < l.projw; ++k) EXPECT_EQ(theta[k], 0.0);
    const auto [m, s] = moments(theta, l.slope, l.fcprojw);  // 256 slopes N(0.2, 1): 5 standard errors
    EXPECT_NEAR(m, init.prelu_mean, 5 * init.prelu_std / 16);
    EXPECT_NEAR(s, init.prelu_std, 5 * init.prelu_std / std::sqrt(512.0));
  }
}

// cos(W_K e_t, b) computed directly: the key rows of head h are rows C + h d_h .. of c_attn's weight.
TEST(KeyAlignment, AgainstADirectComputation) {
  GptConfig c;
  c.vocab = 9, c.context = 4, c.layers = 2, c.heads = 2, c.channels = 8;
  const GptLayout y(c);
  const std::vector<double> theta = step_normals(6, y.size), b = {0.3, -0.1, 0.7, 0.2};
  const int D = c.head_dim(), C = c.channels;
  const std::vector<HeadAlignment> a = key_bias_alignment<double>(c, theta.data(), {}, b, 50, 1, 3);
  ASSERT_EQ(a.size(), 4u);
  for (int l = 0; l < c.layers; ++l)
    for (int h = 0; h < c.heads; ++h) {
      const HeadAlignment& got = a[l * c.heads + h];
      double mean = 0;
      for (int t = 0; t < c.vocab; ++t) {
        std::vector<double> k(D, 0.0);
        for (int d = 0; d < D; ++d)
          for (int i = 0; i < C; ++i)
            k[d] += theta[y.layer[l].qkvw + static_cast<std::size_t>(C + h * D + d) * C + i] * theta[y.wte + t * C + i];
        double kb = 0, kk = 0, bb = 0;
        for (int d = 0; d < D; ++d) kb += k[d] * b[d], kk += k[d] * k[d], bb += b[d] * b[d];
        EXPECT_NEAR(got.cos[t], kb / std::sqrt(kk * bb), 1e-14);
        mean += kb / std::sqrt(kk * bb) / c.vocab;
      }
      EXPECT_NEAR(got.mean_cos, mean, 1e-14);
      ASSERT_EQ(got.top.size(), 3u);
      // The listed tokens have the largest |cos|, in order; every other token's is at most the third's.
      EXPECT_GE(std::abs(got.cos[got.top[0]]), std::abs(got.cos[got.top[1]]));
      EXPECT_GE(std::abs(got.cos[got.top[1]]), std::abs(got.cos[got.top[2]]));
      for (int t = 0; t < c.vocab; ++t) {
        if (t == got.top[0] || t == got.top[1] || t == got.top[2]) continue;
        EXPECT_LE(std::abs(got.cos[t]), std::abs(got.cos[got.top[2]]));
      }
    }
}

// Every key equal to b: cos = 1 for every token, p = 1/(R + 1); the null's S = cos(b, r) for r uniform on
// S^{d_h - 1} has mean 0 and variance 1/d_h.
TEST(KeyAlignment, ClosedFormNull) {
  GptConfig c;
  c.vocab = 5, c.context = 2, c.layers = 1, c.heads = 1, c.channels = 4;
  const GptLayout y(c);
  std::vector<double> theta(y.size, 0.0), b = {1, 2, -1, 0.5};
  for (int t = 0; t < c.vocab; ++t) theta[y.wte + t * 4] = 1 + t;  // e_t = (1 + t) e_0
  for (int d = 0; d < 4; ++d) theta[y.layer[0].qkvw + static_cast<std::size_t>(4 + d) * 4] = b[d];  // W_K e_0 = b
  const int R = 4000;
  const HeadAlignment a = key_bias_alignment<double>(c, theta.data(), {}, b, R, 2, 5)[0];
  for (double v : a.cos) EXPECT_NEAR(v, 1.0, 1e-15);
  EXPECT_NEAR(a.p_value, 1.0 / (R + 1), 1e-15);
  const double sd = 0.5;  // 1/sqrt(d_h)
  EXPECT_NEAR(a.null_mean, 0, 5 * sd / std::sqrt(R));
  EXPECT_NEAR(a.null_std, sd, 5 * sd / std::sqrt(2.0 * R));
  std::printf("alignment null over %d directions: mean %+.4f (0), std %.4f (1/sqrt(d_h) = %.4f)\n", R, a.null_mean,
              a.null_std, sd);
}

}  // namespace
}  // namespace tokdyn
