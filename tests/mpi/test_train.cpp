// tokdyn train's data-parallel batches (doc/science.md section 10.4): the loss and gradient of a batch
// spread over the ranks equal the serial ones (float64, 1e-12) and are the same bits on every rank; the
// sequence offsets are reproducible and in range; the text split.
#include <gtest/gtest.h>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "optimizers.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/train/batches.hpp"
#include "tokdyn/train/charges.hpp"
#include "tokdyn/train/key_alignment.hpp"
#include "tokdyn/train/optimizer.hpp"

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
  const std::vector<std::int64_t> offsets = batch_offsets(1, 17, 7, static_cast<std::int64_t>(split.train.size()), c.context);
  const double loss =
      batch_loss(model, theta.data(), split.train, offsets, c.context, b, grad.data(), MPI_COMM_WORLD);
  const double one =
      batch_loss(model, theta.data(), split.train, offsets, c.context, b, serial.data(), MPI_COMM_SELF);
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

// What each layer's attention reads for a token, averaged over its places: on every rank the serial values
// (1e-13), layer 0 equal to LN_1(wte[t] + wpe[position]) computed here, NaN rows for tokens absent; and the
// key-bias alignment of layer 1 from those inputs equals cos(W_K e_t, b) computed here.
TEST(Train, MeanAttentionInputs) {
  GptConfig c;
  c.vocab = 9, c.context = 6, c.layers = 2, c.heads = 2, c.channels = 8;
  Gpt<double> model(c);
  const GptLayout& y = model.layout();
  std::vector<double> theta(y.size);
  RandomStream(11, Purpose::test).normals(0, 0, theta.data(), theta.size());
  for (double& v : theta) v *= 0.3;
  const TextSplit split = split_text(random_text(7, 300), 0.1, c.context);  // ids 7, 8 never occur
  const std::vector<std::int64_t> offsets = batch_offsets(2, 5, 5, static_cast<std::int64_t>(split.train.size()), c.context);
  const SymmetryBiases none;
  const std::vector<double> all = mean_attention_inputs(model, theta.data(), split.train, offsets, c.context, none, MPI_COMM_WORLD);
  const std::vector<double> one = mean_attention_inputs(model, theta.data(), split.train, offsets, c.context, none, MPI_COMM_SELF);
  const std::size_t C = c.channels, V = c.vocab;
  ASSERT_EQ(all.size(), 2 * V * C);
  // Layer 0 by hand: x = wte[t] + wpe[p], LN_1(x) = (x - mean) / sqrt(var + 1e-5) w + b.
  std::vector<double> direct(V * C, 0.0), count(V, 0.0);
  for (std::int64_t o : offsets)
    for (int p = 0; p < c.context; ++p) {
      const std::size_t t = static_cast<std::size_t>(split.train[static_cast<std::size_t>(o + p)]);
      std::vector<double> x(C);
      double m = 0, v = 0;
      for (std::size_t i = 0; i < C; ++i) x[i] = theta[y.wte + t * C + i] + theta[y.wpe + p * C + i], m += x[i] / C;
      for (std::size_t i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m) / C;
      for (std::size_t i = 0; i < C; ++i)
        direct[t * C + i] += (x[i] - m) / std::sqrt(v + 1e-5) * theta[y.layer[0].ln1w + i] + theta[y.layer[0].ln1b + i];
      count[t] += 1;
    }
  for (std::size_t t = 0; t < V; ++t)
    for (std::size_t i = 0; i < C; ++i) {
      if (count[t] == 0) {
        EXPECT_TRUE(std::isnan(all[t * C + i]) && std::isnan(all[V * C + t * C + i])) << t;
        continue;
      }
      EXPECT_NEAR(all[t * C + i], direct[t * C + i] / count[t], 1e-13) << t;
      for (std::size_t l = 0; l < 2; ++l) EXPECT_NEAR(all[l * V * C + t * C + i], one[l * V * C + t * C + i], 1e-13);
    }
  EXPECT_EQ(count[7] + count[8], 0.0);
  // The alignment of layer 1, head 1 from these inputs; the absent tokens get NaN and stay out of the mean.
  const std::vector<double> b = {0.3, -0.1, 0.7, 0.2};
  const HeadAlignment a = key_bias_alignment<double>(c, theta.data(), all, b, 20, 1, 3)[3];
  const int D = c.head_dim();
  double mean = 0, seen = 0;
  for (std::size_t t = 0; t < V; ++t) {
    if (count[t] == 0) {
      EXPECT_TRUE(std::isnan(a.cos[t])) << t;
      continue;
    }
    double kb = 0, kk = 0, bb = 0;
    for (int d = 0; d < D; ++d) {
      double k = 0;
      for (std::size_t i = 0; i < C; ++i) k += theta[y.layer[1].qkvw + (C + D + d) * C + i] * all[V * C + t * C + i];
      kb += k * b[d], kk += k * k, bb += b[d] * b[d];
    }
    EXPECT_NEAR(a.cos[t], kb / std::sqrt(kk * bb), 1e-14);
    mean += kb / std::sqrt(kk * bb), seen += 1;
  }
  EXPECT_NEAR(a.mean_cos, mean / seen, 1e-14);
  for (int t : a.top) EXPECT_GT(count[static_cast<std::size_t>(t)], 0);
}

TEST(Train, OffsetsAndSplit) {
  for (std::int64_t b = 0; b < 2000; ++b) {
    const std::int64_t o = sequence_offset(4, 3, b, 100, 8);
    EXPECT_GE(o, 0);
    EXPECT_LE(o, 100 - 8 - 1);
    EXPECT_EQ(o, sequence_offset(4, 3, b, 100, 8));
  }
  EXPECT_NE(sequence_offset(4, 3, 0, 1000000, 8), sequence_offset(4, 4, 0, 1000000, 8));
  const std::vector<std::int64_t> batch = batch_offsets(4, 3, 5, 100, 8);
  for (std::int64_t b = 0; b < 5; ++b) EXPECT_EQ(batch[static_cast<std::size_t>(b)], sequence_offset(4, 3, b, 100, 8));
  // Validation: evenly spaced from the first to the last offset, rounded; one sequence starts the part.
  EXPECT_EQ(validation_offsets(4, 100, 8), (std::vector<std::int64_t>{0, 30, 61, 91}));
  EXPECT_EQ(validation_offsets(1, 100, 8), std::vector<std::int64_t>{0});
  EXPECT_EQ(validation_offsets(3, 10, 9), (std::vector<std::int64_t>{0, 0, 0}));
  const TextSplit s = split_text(random_text(5, 1000), 0.1, 8);
  EXPECT_EQ(s.train.size(), 900u);
  EXPECT_EQ(s.validation.size(), 100u);
  EXPECT_THROW(split_text(random_text(5, 50), 0.1, 8), InputError);
}

}  // namespace

namespace {

// The charges of every head along an optimizer's run on the GPT (batches of a random text).
struct ChargeRun {
  std::vector<std::vector<double>> charges;  // per step: every entry p < q of L_QK and L_VO of every head
  std::vector<double> scale;                 // |theta| |P| per step
};

ChargeRun run_charges(const std::string& name, const std::vector<std::string>& keys, bool resample_bq, int steps) {
  GptConfig c;
  c.vocab = 7, c.context = 8, c.layers = 2, c.heads = 2, c.channels = 8;
  Gpt<double> model(c);
  std::vector<double> theta(model.layout().size), grad(theta.size());
  RandomStream(9, Purpose::test).normals(0, 0, theta.data(), theta.size());
  for (double& v : theta) v *= 0.3;
  const TextSplit split = split_text(random_text(c.vocab, 400), 0.1, c.context);
  OptimizerContext context;
  context.blocks = model.layout().blocks();  // as the run passes them (used by ecd.projection = tensor)
  auto opt = test::make_optimizer<double>(name, keys, theta.size(), context);
  ChargeRun out;
  const int D = c.head_dim();
  for (int k = 0; k < steps; ++k) {
    SymmetryBiases b;
    if (resample_bq) {  // b_Q ~ N(0.5, 0.1^2) per layer, drawn anew every step
      b.query.resize(static_cast<std::size_t>(c.layers) * D);
      RandomStream(21, Purpose::test).normals(static_cast<std::uint64_t>(k), 0, b.query.data(), b.query.size());
      for (double& v : b.query) v = 0.5 + 0.1 * v;
    }
    const double f = batch_loss(model, theta.data(), split.train,
                               batch_offsets(1, k, 4, static_cast<std::int64_t>(split.train.size()), c.context), c.context, b,
                               grad.data(), MPI_COMM_WORLD);
    opt->step(f, grad.data(), theta.data());
    std::vector<double> all;
    for (const HeadCharges& h : head_charges(c, model.layout(), theta.data(), opt->momentum().data()))
      for (int p = 0; p < D; ++p)
        for (int q = p + 1; q < D; ++q) all.push_back(h.qk[p * D + q]), all.push_back(h.vo[p * D + q]);
    double t2 = 0, p2 = 0;
    for (double v : theta) t2 += v * v;
    for (double v : opt->momentum()) p2 += v * v;
    out.charges.push_back(all);
    out.scale.push_back(std::sqrt(t2 * p2));
  }
  return out;
}

double largest(const ChargeRun& r) {
  double m = 0;
  for (std::size_t k = 0; k < r.charges.size(); ++k)
    for (double v : r.charges[k]) m = std::max(m, std::abs(v) / r.scale[k]);
  return m;
}

// max over steps and entries of |l_a(t) / l_0(t) - l_a(0) / l_0(0)|, l_0 the largest entry at the start.
double ratio_drift(const ChargeRun& r) {
  const std::vector<double>& first = r.charges.front();
  std::size_t ref = 0;
  for (std::size_t a = 0; a < first.size(); ++a)
    if (std::abs(first[a]) > std::abs(first[ref])) ref = a;
  double worst = 0;
  for (const auto& l : r.charges)
    for (std::size_t a = 0; a < l.size(); ++a) worst = std::max(worst, std::abs(l[a] / l[ref] - first[a] / first[ref]));
  return worst;
}

TEST(Train, ChargesOfTheHeads) {
  const std::vector<std::string> ecd{"ecd.lr=0.3", "ecd.eta=10", "ecd.F0=0"};
  const double quiet = largest(run_charges("ecd", ecd, false, 40));
  const double kicked = largest(run_charges("ecd", ecd, true, 40));
  std::vector<std::string> random_start = ecd;
  random_start.push_back("ecd.start=random");
  const ChargeRun global = run_charges("ecd", random_start, false, 40);
  const double ratios = ratio_drift(global);
  std::vector<std::string> tensor = random_start;
  tensor.push_back("ecd.projection=tensor");
  const double tensor_drift = ratio_drift(run_charges("ecd", tensor, false, 40));
  const ChargeRun heavy = run_charges("sgdm", {"sgdm.lr=0.03", "sgdm.momentum=0.95", "sgdm.initial_buffer=0.1"}, false, 40);
  double first = 0, last = 0;
  for (double v : heavy.charges.front()) first = std::max(first, std::abs(v));
  for (double v : heavy.charges.back()) last = std::max(last, std::abs(v));
  const double adam_charge = largest(run_charges("adamw", {"adamw.lr=1e-3", "adamw.weight_decay=0"}, false, 40));
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  if (rank == 0)
    std::printf("GPT, 40 steps: ECD from u = -g/|g| max |L| / (|theta| |u|) = %.2e without biases, %.2e with b_Q "
              "resampled each step; from a random u the ratios drift by %.2e (global projection), %.2e (per tensor); "
              "SGDM max |L| from %.3e to %.3e (mu^39 = %.3f); AdamW from m = 0: %.2e\n",
              quiet, kicked, ratios, tensor_drift, first, last, std::pow(0.95, 39), adam_charge);
  EXPECT_LT(quiet, 1e-13);
  // The biases' torque and AdamW's preconditioner put charges where ECD keeps round-off: 6e-5 and 5e-5
  // of |theta| |P| after 40 small steps, against 1e-18.
  EXPECT_GT(kicked, 1e-6);
  EXPECT_LT(ratios, 1e-10);
  EXPECT_GT(tensor_drift, 1e-6);
  EXPECT_LT(last, 0.5 * first);
  EXPECT_GT(adam_charge, 1e-6);
}

}  // namespace
