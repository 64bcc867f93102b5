// Distributed ring attention equals the naive O(N^2) definition, for SA and USA, random Q, K, V,
// tiles that do and do not divide N and the local blocks, at any rank count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "reference.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/ring_attention.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

namespace {

AttentionWeights random_weights(int d, double beta, MPI_Comm comm) {
  DeckSchema s;
  add_attention_keys(s);
  const Deck deck = Deck::parse(s, "",
                                {"--attention.query=gaussian", "--attention.key=gaussian", "--attention.value=gaussian",
                                 "--attention.query_scale=1.5", "--attention.beta=" + std::to_string(beta)});
  return attention_weights_from_deck(deck, d, comm);
}

void check_against_naive(const std::string& style, std::int64_t n, int d, int tile, double beta) {
  const Comm comm;
  const Partition part(n, comm.size());
  std::vector<double> all(n * d);
  sample_uniform_sphere(77, 0, n, d, all.data());
  AttentionContext c;
  c.comm = comm.get();
  c.partition = part;
  c.weights = random_weights(d, beta, comm.get());
  c.tile = tile;
  auto attention = attention_styles().make(style, c);
  const std::int64_t begin = part.begin(comm.rank()), count = part.count(comm.rank());
  std::vector<double> local(all.begin() + begin * d, all.begin() + (begin + count) * d), out(count * d);
  attention->apply(local.data(), out.data());
  const std::vector<double> ref = test::naive_attention(all, n, c.weights, style == "softmax");
  double scale = 0;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  // Sums of N positive terms in a different order: round-off ~ N eps relative to the largest entry.
  for (std::int64_t i = 0; i < count; ++i)
    for (int a = 0; a < d; ++a)
      ASSERT_NEAR(out[i * d + a], ref[(begin + i) * d + a], 1e-12 * scale)
          << style << " N = " << n << " tile = " << tile << " row " << begin + i;
}

}  // namespace

TEST(RingAttention, SoftmaxEqualsNaiveReference) {
  for (int tile : {1, 7, 16, 25, 256}) check_against_naive("softmax", 50, 5, tile, 1.3);
  check_against_naive("softmax", 7, 3, 4, 2.0);  // fewer tokens than 3 ranks x tile
  check_against_naive("softmax", 2, 2, 3, 0.5);  // a rank with no tokens at 3 ranks
}

TEST(RingAttention, UnnormalizedEqualsNaiveReference) {
  for (int tile : {1, 7, 16, 25, 256}) check_against_naive("unnormalized", 50, 5, tile, 1.3);
  check_against_naive("unnormalized", 31, 4, 8, 3.0);
}

TEST(RingAttention, LargeLogitsStayFiniteUnderSoftmax) {
  // beta = 200: exp(beta) overflows nothing thanks to the running maximum.
  check_against_naive("softmax", 40, 3, 9, 200.0 / 1.5 / 1.5);
}

TEST(RingAttention, IdentityWeightsGiveTheMeanForBetaZero) {
  // beta = 0: SA is the plain mean of V x_j = x_j for every query.
  const Comm comm;
  const std::int64_t n = 23;
  const int d = 4;
  const Partition part(n, comm.size());
  std::vector<double> all(n * d);
  sample_uniform_sphere(3, 0, n, d, all.data());
  AttentionContext c;
  c.comm = comm.get();
  c.partition = part;
  c.tile = 5;
  c.weights = identity_attention_weights(d, 0.0);
  auto attention = attention_styles().make("softmax", c);
  const std::int64_t begin = part.begin(comm.rank()), count = part.count(comm.rank());
  std::vector<double> local(all.begin() + begin * d, all.begin() + (begin + count) * d), out(count * d);
  attention->apply(local.data(), out.data());
  std::vector<double> mean(d, 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (int a = 0; a < d; ++a) mean[a] += all[j * d + a] / n;
  for (std::int64_t i = 0; i < count; ++i)
    for (int a = 0; a < d; ++a) EXPECT_NEAR(out[i * d + a], mean[a], 1e-15);
}

namespace {

// Logits beta q k <x_i, x_j> (the half ring's case) with Gaussian values.
AttentionWeights scalar_logit_weights(int d, double beta, double q, double k, MPI_Comm comm) {
  AttentionWeights w = random_weights(d, beta, comm);
  w.query.assign(static_cast<std::size_t>(d) * d, 0.0);
  w.key = w.query;
  for (int a = 0; a < d; ++a) w.query[a * d + a] = q, w.key[a * d + a] = k;
  return w;
}

struct SymmetricCase {
  std::vector<double> all, local;
  std::int64_t begin = 0, count = 0;
};
SymmetricCase symmetric_case(std::int64_t n, int d, const Comm& comm, double spread) {
  SymmetricCase s;
  const Partition part(n, comm.size());
  s.all.resize(n * d);
  sample_uniform_sphere(78, 0, n, d, s.all.data());
  // Norms between 1 - spread and 1 + spread: off the sphere too (the shift uses every token's own norm).
  for (std::int64_t i = 0; i < n; ++i)
    for (int a = 0; a < d; ++a) s.all[i * d + a] *= 1 + spread * std::sin(0.7 * i);
  s.begin = part.begin(comm.rank());
  s.count = part.count(comm.rank());
  s.local.assign(s.all.begin() + s.begin * d, s.all.begin() + (s.begin + s.count) * d);
  return s;
}

// The half ring (context c as given) against the general pass (c.symmetric = false) and the naive sum, every
// entry within tolerance of the largest naive entry; the half ring must have been taken.
void expect_half_ring_equals_general(const char* style, AttentionContext c, const SymmetricCase& t, std::int64_t n,
                                     double tolerance, const std::string& label) {
  const int d = c.weights.d;
  auto half = attention_styles().make(style, c);
  c.symmetric = false;
  auto general = attention_styles().make(style, c);
  std::vector<double> a(t.count * d), b(a.size());
  half->apply(t.local.data(), a.data());
  general->apply(t.local.data(), b.data());
  EXPECT_TRUE(dynamic_cast<RingAttention&>(*half).took_symmetric()) << style << label;
  EXPECT_FALSE(dynamic_cast<RingAttention&>(*general).took_symmetric()) << style << label;
  const std::vector<double> ref = test::naive_attention(t.all, n, c.weights, std::string(style) == "softmax");
  double scale = 0;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  for (std::int64_t i = 0; i < t.count * d; ++i) {
    EXPECT_NEAR(a[i], b[i], tolerance * scale) << style << label << " at " << i;
    EXPECT_NEAR(a[i], ref[t.begin * d + i], tolerance * scale) << style << label << " at " << i;
  }
}

}  // namespace

// The half ring (one exponential per unordered pair) equals the general ring pass and the naive
// definition to 1e-12 of the largest entry (sums of N terms in another order, ~N eps), for SA and USA,
// several scales c = beta q k, tiles that do and do not divide the blocks, tokens on and off the sphere.
TEST(RingAttention, SymmetricHalfRingEqualsGeneralPass) {
  const Comm comm;
  for (const char* style : {"softmax", "unnormalized"})
    for (double beta : {0.3, 2.0, 9.0})
      for (int tile : {5, 16, 64}) {
        const std::int64_t n = 97;
        const int d = 4;
        const SymmetricCase t = symmetric_case(n, d, comm, beta > 5 ? 0.0 : 0.2);
        AttentionContext c;
        c.comm = comm.get();
        c.partition = Partition(n, comm.size());
        c.weights = scalar_logit_weights(d, beta, 1.3, 0.7, comm.get());
        c.tile = tile;
        expect_half_ring_equals_general(style, c, t, n, 1e-12,
                                        " beta " + std::to_string(beta) + " tile " + std::to_string(tile));
      }
}

// Logits that are not a multiple of <x_i, x_j> (Gaussian Q, K), or causal ones, never take the half ring.
TEST(RingAttention, GeneralLogitsKeepTheGeneralPass) {
  const Comm comm;
  const SymmetricCase t = symmetric_case(20, 3, comm, 0.0);
  AttentionContext c;
  c.comm = comm.get();
  c.partition = Partition(20, comm.size());
  c.weights = random_weights(3, 1.0, comm.get());
  auto a = attention_styles().make("softmax", c);
  std::vector<double> out(t.count * 3);
  a->apply(t.local.data(), out.data());
  EXPECT_FALSE(dynamic_cast<RingAttention&>(*a).took_symmetric());
  c.weights = scalar_logit_weights(3, 1.0, 1.0, 1.0, comm.get());
  c.causal = true;
  auto causal = attention_styles().make("softmax", c);
  causal->apply(t.local.data(), out.data());
  EXPECT_FALSE(dynamic_cast<RingAttention&>(*causal).took_symmetric());
}

// The statistics formed in the attention's half-ring pass equal the statistics' own pass: histogram and
// cluster counts exactly, E_beta and the cosines to 1e-12 (the same tiles and order: in practice the same
// bits); the attention output of the same pass equals a plain apply bit for bit;
// a statistics beta other than the logits' scale is refused (the caller runs the own pass).
TEST(RingAttention, FusedStatisticsEqualTheStandalonePass) {
  const Comm comm;
  for (int tile : {7, 16}) {
    const std::int64_t n = 151;
    const int d = 4;
    const double beta = 2.5;
    const SymmetricCase t = symmetric_case(n, d, comm, 0.0);
    AttentionContext c;
    c.comm = comm.get();
    c.partition = Partition(n, comm.size());
    c.weights = identity_attention_weights(d, beta);
    c.tile = tile;
    auto attention = attention_styles().make("softmax", c);
    auto fresh = attention_styles().make("softmax", c);
    PairStatisticsPass stats(comm.get(), c.partition, d, beta, 30, tile, 0.8);
    const PairStatistics own = stats.compute(t.local.data());
    PairStatistics fused;
    std::vector<double> kept(t.count * d), again(kept.size());
    ASSERT_TRUE(attention->apply_with_statistics(t.local.data(), kept.data(), stats, fused));
    EXPECT_EQ(fused.histogram, own.histogram);
    EXPECT_EQ(fused.aligned_pairs, own.aligned_pairs);
    EXPECT_EQ(fused.antipodal_pairs, own.antipodal_pairs);
    EXPECT_NEAR(fused.energy, own.energy, 1e-12 * own.energy);
    EXPECT_NEAR(fused.mean_cosine, own.mean_cosine, 1e-12);
    EXPECT_NEAR(fused.min_cosine, own.min_cosine, 1e-12);
    EXPECT_EQ(fused.order_parameter, own.order_parameter);
    if (comm.rank() == 0)
      std::printf("tile %d: fused - standalone: E_beta %.3g, mean cosine %.3g, min cosine %.3g\n", tile,
                  fused.energy - own.energy, fused.mean_cosine - own.mean_cosine, fused.min_cosine - own.min_cosine);
    // The attention of the same pass is apply's, bit for bit.
    fresh->apply(t.local.data(), again.data());
    EXPECT_EQ(kept, again);
    // Statistics of another beta cannot share the pass: apply's output alone, the result untouched.
    PairStatisticsPass other(comm.get(), c.partition, d, 1.0, 30, tile, 0.8);
    PairStatistics untouched = fused;
    std::fill(kept.begin(), kept.end(), 0.0);
    EXPECT_FALSE(attention->apply_with_statistics(t.local.data(), kept.data(), other, untouched));
    EXPECT_EQ(kept, again);
    EXPECT_EQ(untouched.energy, fused.energy);
  }
}

TEST(RingAttention, Float32TilesWithinTheirBound) {
  // attention.precision = float32 against float64, row by row, within the bound of pairs/online_softmax.hpp:
  // |out32 - out64| <= (c (d + 2) S + tile + 2) u W, u = 2^-24, S the row's largest sum_a |q_a k_a|, W =
  // sum_j w_ij |V x_j| (w_ij the row's normalised weights for SA, e^{s_ij} / N for USA), c = 2 (SA) or 1 (USA).
  // And above 1e-10 of W somewhere: the float path was taken (float64 agrees to ~1e-15).
  const Comm comm;
  const std::int64_t n = 300;
  const int d = 8;
  const double u = std::ldexp(1.0, -24);
  std::vector<double> all(n * d);
  sample_uniform_sphere(12, 0, n, d, all.data());
  for (bool half : {false, true})  // random Q, K, V: the general ring; Q = K = V = I: the half ring
  for (int tile : {16, 64})
    for (bool normalized : {true, false}) {
      AttentionContext c;
      c.comm = comm.get();
      c.partition = Partition(n, comm.size());
      c.weights = half ? identity_attention_weights(d, 2.5) : random_weights(d, 1.2, comm.get());
      c.tile = tile;
      const std::int64_t begin = c.partition.begin(comm.rank()), count = c.partition.count(comm.rank());
      const std::vector<double> x(all.begin() + begin * d, all.begin() + (begin + count) * d);
      std::vector<double> out64(count * d), out32(count * d);
      const std::string style = normalized ? "softmax" : "unnormalized";
      attention_styles().make(style, c)->apply(x.data(), out64.data());
      c.single_tiles = true;
      auto single = attention_styles().make(style, c);
      single->apply(x.data(), out32.data());
      EXPECT_EQ(dynamic_cast<RingAttention&>(*single).took_symmetric(), half);
      const AttentionWeights& w = c.weights;
      double worst = 0, largest = 0;  // the largest |out32 - out64| / bound, and / W
      for (std::int64_t i = 0; i < count; ++i) {
        const double* xi = all.data() + (begin + i) * d;
        std::vector<double> q(d, 0.0);
        for (int a = 0; a < d; ++a)
          for (int b = 0; b < d; ++b) q[a] += w.beta * w.query[a * d + b] * xi[b];
        double s_max = 0, z = 0, weighted = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const double* xj = all.data() + j * d;
          double s = 0, s_abs = 0, v_max = 0;
          for (int a = 0; a < d; ++a) {
            double k = 0, v = 0;
            for (int b = 0; b < d; ++b) k += w.key[a * d + b] * xj[b], v += w.value[a * d + b] * xj[b];
            s += q[a] * k, s_abs += std::abs(q[a] * k), v_max = std::max(v_max, std::abs(v));
          }
          s_max = std::max(s_max, s_abs);
          z += std::exp(s);
          weighted += std::exp(s) * v_max;
        }
        const double big_w = normalized ? weighted / z : weighted / static_cast<double>(n);
        const double bound = ((normalized ? 2 : 1) * (d + 2) * s_max + tile + 2) * u * big_w;
        for (int a = 0; a < d; ++a) {
          const double diff = std::abs(out32[i * d + a] - out64[i * d + a]);
          worst = std::max(worst, diff / bound);
          largest = std::max(largest, diff / big_w);
        }
      }
      double global[2] = {0, 0}, local[2] = {worst, largest};
      TOKDYN_MPI_CHECK(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm.get()));
      EXPECT_LE(global[0], 1.0) << style << " tile " << tile << " half ring " << half;
      EXPECT_GT(global[1], 1e-10) << style << " tile " << tile << " half ring " << half
                                  << ": the float32 tiles were not used";
      if (comm.rank() == 0)
        std::printf("float32 tiles, %s ring, %s, tile %d: max |out32 - out64| / bound = %.3g, / W = %.3g\n",
                    half ? "half" : "general", style.c_str(), tile, global[0], global[1]);
    }
}

TEST(RingAttention, SymmetricPositiveQTKTakesTheHalfRing) {
  // Q = K = G (Gaussian): beta Q^T K = beta G^T G is symmetric positive semi-definite, the logits are
  // <R x_i, R x_j> with R its square root, and the half ring equals the general pass and the naive sum to 1e-12.
  // K = diag(1, -1, 1, ...) with Q = I: symmetric but indefinite, e^{s_ij} is not bounded by the rows' own
  // terms: the general pass.
  const Comm comm;
  const std::int64_t n = 61;
  const int d = 5;
  const SymmetricCase t = symmetric_case(n, d, comm, 0.2);
  for (const char* style : {"softmax", "unnormalized"})
    for (bool single : {false, true}) {
      AttentionContext c;
      c.comm = comm.get();
      c.partition = Partition(n, comm.size());
      c.weights = random_weights(d, 0.8, comm.get());
      c.weights.key = c.weights.query;
      c.tile = 16;
      c.single_tiles = single;
      // float32 tiles: their bound (pairs/online_softmax.hpp) is ~1e-5 of the values here; seen ~1e-7.
      expect_half_ring_equals_general(style, c, t, n, single ? 1e-5 : 1e-12, single ? " float32" : "");
    }
  AttentionContext c;
  c.comm = comm.get();
  c.partition = Partition(n, comm.size());
  c.weights = identity_attention_weights(d, 1.0);
  c.weights.key[d + 1] = -1;  // K = diag(1, -1, 1, 1, 1)
  auto indefinite = attention_styles().make("softmax", c);
  std::vector<double> out(t.count * d);
  indefinite->apply(t.local.data(), out.data());
  EXPECT_FALSE(dynamic_cast<RingAttention&>(*indefinite).took_symmetric());
}
