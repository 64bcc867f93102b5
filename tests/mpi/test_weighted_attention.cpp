// Token masses in the ring attention: SA and USA with random Q, K, V and random masses (some zero,
// whole tiles and whole ranks of zero mass) equal the naive weighted O(N^2) sum; uniform masses set
// explicitly give the bits of never setting them; bad masses are a collective InputError.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "distributed.hpp"
#include "reference.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

namespace {

AttentionWeights gaussian_weights(int d, double beta) {
  DeckSchema s;
  add_attention_keys(s);
  const Deck deck = Deck::parse(s, "",
                                {"--attention.query=gaussian", "--attention.key=gaussian", "--attention.value=gaussian",
                                 "--attention.beta=" + std::to_string(beta)});
  return attention_weights_from_deck(deck, d, MPI_COMM_WORLD);
}


void check_weighted(const std::string& style, std::int64_t n, int d, int tile, double beta,
                    const std::vector<std::int64_t>& zeros) {
  const AttentionContext c = test::world_context(n, gaussian_weights(d, beta), tile);
  std::vector<double> all(n * d);
  sample_uniform_sphere(41, 0, n, d, all.data());
  const std::vector<double> mass = test::random_masses(n, 3, zeros);
  auto attention = attention_styles().make(style, c);
  const std::vector<double> x = test::local_rows(all, c.partition, d), w = test::local_rows(mass, c.partition, 1);
  std::vector<double> out(x.size());
  attention->set_masses(w.data());
  attention->apply(x.data(), out.data());
  const std::vector<double> ref = test::naive_weighted_attention(all, n, c.weights, mass, style == "softmax");
  double scale = 0;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  const Comm comm;
  const std::int64_t begin = c.partition.begin(comm.rank());
  // Sums of N positive terms in another order, and exp(log(N w)) = N w to a few ulp: round-off
  // ~ N eps = 1e-14 relative to the largest entry, well inside 1e-12.
  for (std::size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], ref[begin * d + i], 1e-12 * scale) << style << " N " << n << " tile " << tile << " entry " << i;
}

}  // namespace

TEST(WeightedRingAttention, SoftmaxEqualsNaiveWeightedSum) {
  for (int tile : {1, 7, 16, 256}) check_weighted("softmax", 50, 5, tile, 1.3, {0, 3, 4, 17, 49});
  // Tokens 0..13 massless: with tile 7 the first two key tiles are all -inf, and at 3 ranks rank 0's
  // whole block is (its own block is visited first, so the running max stays -inf for a whole step).
  std::vector<std::int64_t> first(14);
  for (int j = 0; j < 14; ++j) first[j] = j;
  check_weighted("softmax", 40, 3, 7, 2.0, first);
  check_weighted("softmax", 40, 3, 7, 150.0, first);  // large logits: the running max still protects
}

TEST(WeightedRingAttention, UnnormalizedEqualsNaiveWeightedSum) {
  for (int tile : {1, 7, 16, 256}) check_weighted("unnormalized", 50, 5, tile, 1.3, {1, 2, 30});
  std::vector<std::int64_t> first(14);
  for (int j = 0; j < 14; ++j) first[j] = j;
  check_weighted("unnormalized", 40, 4, 7, 2.0, first);
}

TEST(WeightedRingAttention, UniformMassesGiveTheSameBits) {
  for (const std::string style : {"softmax", "unnormalized", "fourier", "fourier-unnormalized"}) {
    const std::int64_t n = 37;
    const int d = style.rfind("fourier", 0) == 0 ? 2 : 4;
    const AttentionContext c =
        test::world_context(n, d == 2 ? identity_attention_weights(2, 2.5) : gaussian_weights(d, 1.7), 8);
    std::vector<double> all(n * d);
    sample_uniform_sphere(9, 0, n, d, all.data());
    const std::vector<double> x = test::local_rows(all, c.partition, d);
    std::vector<double> plain(x.size()), weighted(x.size());
    attention_styles().make(style, c)->apply(x.data(), plain.data());
    auto attention = attention_styles().make(style, c);
    const std::vector<double> uniform(x.size() / d, 1.0 / n);
    attention->set_masses(uniform.data());
    attention->apply(x.data(), weighted.data());
    EXPECT_EQ(std::memcmp(plain.data(), weighted.data(), plain.size() * sizeof(double)), 0) << style;
  }
}

TEST(WeightedRingAttention, BadMassesAreACollectiveInputError) {
  const std::int64_t n = 20;
  const AttentionContext c = test::world_context(n, identity_attention_weights(3, 1.0), 4);
  const Comm comm;
  const std::int64_t count = c.partition.count(comm.rank()), begin = c.partition.begin(comm.rank());
  auto attention = attention_styles().make("softmax", c);
  auto masses_with = [&](std::int64_t where, double value) {
    std::vector<double> all(n, 1.0 / n);
    all[where] = value;
    return std::vector<double>(all.begin() + begin, all.begin() + begin + count);
  };
  // The bad entry lives on the last rank only: every rank must still throw.
  EXPECT_THROW(attention->set_masses(masses_with(n - 1, -1e-3).data()), InputError);
  EXPECT_THROW(attention->set_masses(masses_with(n - 1, NAN).data()), InputError);
  EXPECT_THROW(attention->set_masses(masses_with(n - 1, INFINITY).data()), InputError);
  EXPECT_THROW(attention->set_masses(masses_with(n - 1, 2.0 / n).data()), InputError);  // sums to 1 + 1/N
  EXPECT_NO_THROW(attention->set_masses(masses_with(n - 1, 1.0 / n).data()));
}
