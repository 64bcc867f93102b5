// tokdyn train's data-parallel batches (doc/science.md section 10.4): the loss and gradient of a batch
// spread over the ranks equal the serial ones (float64, 1e-12) and are the same bits on every rank; the
// sequence offsets are reproducible and in range; the text split.
#include <gtest/gtest.h>

#include <mpi.h>

#include <cmath>
#include <vector>

#include "tokdyn/core/error.hpp"
#include "tokdyn/core/random.hpp"
#include "tokdyn/train/batches.hpp"

using namespace tokdyn;

namespace {

TokenizedText random_text(int vocab, int n) {
  TokenizedText t;
  for (int v = 0; v < vocab; ++v) t.vocabulary.push_back(std::string(1, static_cast<char>('a' + v)));
  std::vector<double> u(n);
  RandomStream(3, Purpose::test).normals(0, 0, u.data(), u.size());
  for (double x : u) t.tokens.push_back(static_cast<int>(std::abs(x) * 3) % vocab);
  return t;
}

TEST(Train, BatchGradientIsRankIndependent) {
  GptConfig c;
  c.vocab = 7, c.context = 8, c.layers = 2, c.heads = 2, c.channels = 8, c.prelu = true;
  Gpt<double> model(c);
  std::vector<double> theta(model.layout().size);
  RandomStream(9, Purpose::test).normals(0, 0, theta.data(), theta.size());
  for (double& v : theta) v *= 0.3;
  const TextSplit split = split_text(random_text(c.vocab, 400), 0.1, c.context);
  SymmetryBiases b;
  b.query.assign(static_cast<std::size_t>(c.layers) * c.head_dim(), 0.5);
  std::vector<double> grad(theta.size()), serial(theta.size());
  const double loss =
      batch_loss(model, theta.data(), split.train, 1, 17, 7, c.context, b, grad.data(), MPI_COMM_WORLD);
  const double one =
      batch_loss(model, theta.data(), split.train, 1, 17, 7, c.context, b, serial.data(), MPI_COMM_SELF);
  double diff = 0, size = 0;
  for (std::size_t k = 0; k < grad.size(); ++k) {
    diff = std::max(diff, std::abs(grad[k] - serial[k]));
    size = std::max(size, std::abs(serial[k]));
  }
  EXPECT_NEAR(loss, one, 1e-12 * one);
  EXPECT_LT(diff, 1e-12 * size);
  // The same bits on every rank.
  std::vector<double> first = grad;
  first.push_back(loss);
  TOKDYN_MPI_CHECK(MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  int same = first.back() == loss, all = 0;
  for (std::size_t k = 0; k < grad.size(); ++k) same = same && first[k] == grad[k];
  TOKDYN_MPI_CHECK(MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  EXPECT_EQ(all, 1);
  // The batch loss is the mean of the sequences' losses (a near-uniform model: about ln V).
  EXPECT_GT(loss, 0.5 * std::log(7.0));
  EXPECT_LT(loss, 3 * std::log(7.0));
}

TEST(Train, OffsetsAndSplit) {
  for (std::int64_t b = 0; b < 2000; ++b) {
    const std::int64_t o = sequence_offset(4, 3, b, 100, 8);
    EXPECT_GE(o, 0);
    EXPECT_LE(o, 100 - 8 - 1);
    EXPECT_EQ(o, sequence_offset(4, 3, b, 100, 8));
  }
  EXPECT_NE(sequence_offset(4, 3, 0, 1000000, 8), sequence_offset(4, 4, 0, 1000000, 8));
  const TextSplit s = split_text(random_text(5, 1000), 0.1, 8);
  EXPECT_EQ(s.train.size(), 900u);
  EXPECT_EQ(s.validation.size(), 100u);
  EXPECT_THROW(split_text(random_text(5, 50), 0.1, 8), InputError);
}

}  // namespace
