// Distributed ring attention equals the naive O(N^2) definition, for SA and USA, random Q, K, V,
// tiles that do and do not divide N and the local blocks, at any rank count.
#include <gtest/gtest.h>

#include <cmath>

#include "reference.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/comm.hpp"
#include "tokdyn/core/deck.hpp"
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
