// tokdyn markov's data and model (doc/science.md section 8): the population law against enumeration of
// every sequence, the hand-written gradient against central differences, the population loss against a
// large sample, the symmetries behind the conserved C_m and C_k, stage I's matrix G, rank independence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/markov/one_layer.hpp"
#include "tokdyn/markov/sequences.hpp"

using namespace tokdyn;

namespace {

MarkovChain paper_chain(double lam = 0.5) {
  MarkovChain c;
  c.d = 4;
  c.lam = lam;
  c.pi = {0.75, 0.19, 0.05, 0.01};
  return c;
}

// Every item on this process (MPI_COMM_SELF's view).
SequenceItems all_population(const MarkovChain& chain, std::int64_t s) { return population_items(chain, s, 1, 0, 1 << 24); }

std::vector<double> random_theta(const OneLayerShape& shape, double eps, std::uint64_t seed) {
  std::vector<double> theta(shape.size());
  initial_one_layer(shape, eps, seed, theta.data());
  return theta;
}

double norm(const std::vector<double>& v) { return std::sqrt(std::inner_product(v.begin(), v.end(), v.begin(), 0.0)); }

}  // namespace

// The dynamic program over (last token, counts) against the sum over all d^s sequences of their
// probabilities (exact up to the round-off of the sums: 1e-15).
TEST(Markov, PopulationLawEqualsEnumeration) {
  for (bool uniform : {false, true}) {
    MarkovChain chain;
    chain.d = 3;
    chain.lam = 0.3;
    chain.pi = {0.5, 0.3, 0.2};
    chain.start_uniform = uniform;
    const int s = 6;
    std::map<std::vector<int>, double> law;  // key: counts then last token
    std::vector<int> x(s, 0);
    for (int code = 0; code < 729; ++code) {
      int c = code;
      for (int k = 0; k < s; ++k, c /= 3) x[k] = c % 3;
      double p = chain.start(x[0]);
      for (int k = 1; k < s; ++k) p *= chain.transition(x[k - 1], x[k]);
      std::vector<int> key(4, 0);
      for (int k = 0; k < s; ++k) ++key[x[k]];
      key[3] = x[s - 1];
      law[key] += p;
    }
    const SequenceItems items = all_population(chain, s);
    ASSERT_EQ(static_cast<std::size_t>(items.size()), law.size());
    double total = 0;
    for (std::int64_t j = 0; j < items.size(); ++j) {
      const std::vector<int> key = {static_cast<int>(items.counts[j * 3]), static_cast<int>(items.counts[j * 3 + 1]),
                                    static_cast<int>(items.counts[j * 3 + 2]), items.last[j]};
      EXPECT_NEAR(items.weight[j], law.at(key), 1e-15);
      total += items.weight[j];
      double q = 0;
      for (int y = 0; y < 3; ++y) q += items.target[j * 3 + y];
      EXPECT_NEAR(q, 1.0, 1e-15);
    }
    EXPECT_NEAR(total, 1.0, 1e-14);
  }
  EXPECT_EQ(population_states(4, 32), 4 * 6545);
  EXPECT_THROW(population_items(paper_chain(), 400, 1, 0, 1000000), InputError);
}

// Central differences with h = 1e-5 on every parameter: truncation O(h^2) ~ 1e-10 and round-off
// ~ 1e-16 / h = 1e-11 relative, so a relative error below 1e-7 is a correct backward pass.
TEST(Markov, GradientEqualsCentralDifferences) {
  const MarkovChain chain = paper_chain();
  const SequenceItems population = all_population(chain, 6);
  const SequenceItems sample = sample_items(chain, 6, 40, 3, Partition(40, 1), 0);
  for (const SequenceItems* items : {&population, &sample})
    for (bool residual : {false, true})
      for (double tau : {1.0, std::sqrt(5.0)}) {
        const OneLayerShape shape{4, 5, 3, residual, tau};
        std::vector<double> theta = random_theta(shape, 0.7, 11), grad(shape.size()), fd(shape.size());
        evaluate_one_layer(shape, theta.data(), *items, grad.data(), MPI_COMM_SELF);
        const double h = 1e-5;
        for (std::size_t k = 0; k < theta.size(); ++k) {
          const double keep = theta[k];
          theta[k] = keep + h;
          const double up = evaluate_one_layer(shape, theta.data(), *items, nullptr, MPI_COMM_SELF).loss;
          theta[k] = keep - h;
          const double down = evaluate_one_layer(shape, theta.data(), *items, nullptr, MPI_COMM_SELF).loss;
          theta[k] = keep;
          fd[k] = (up - down) / (2 * h);
        }
        std::vector<double> diff(fd.size());
        for (std::size_t k = 0; k < fd.size(); ++k) diff[k] = grad[k] - fd[k];
        EXPECT_LT(norm(diff) / norm(fd), 1e-7) << "residual " << residual << ", tau " << tau << ", "
                                               << (items == &population ? "population" : "sample");
      }
}

// Scores far apart (WQ scaled by 1e4: |S| ~ 1e3): an item whose present tokens all score more than 600 below its
// row's best would underflow in the exponentials shared by the evaluation, and takes its own. The loss equals a
// direct sum with each item's own maximum (1e-12 relative), and the gradient is finite.
TEST(Markov, FarApartScoresTakeTheirOwnExponentials) {
  const SequenceItems items = all_population(paper_chain(), 6);
  const OneLayerShape shape{4, 5, 3, false, 1.0};
  std::vector<double> theta = random_theta(shape, 0.7, 11), grad(shape.size());
  for (std::size_t k = shape.wq(); k < shape.wk(); ++k) theta[k] *= 1e4;
  const int d = shape.d, m = shape.m, mk = shape.mk;
  const OneLayerWeights w = shape.weights(theta.data());
  // S [d, d] = (W0 WQ)(W0 WK)^T / tau and M [d, d] = W0 W1, by plain loops.
  std::vector<double> Q(d * mk, 0.0), K(d * mk, 0.0), S(d * d, 0.0), M(d * d, 0.0);
  for (int t = 0; t < d; ++t)
    for (int a = 0; a < m; ++a) {
      for (int c = 0; c < mk; ++c) Q[t * mk + c] += w.W0[t * m + a] * w.WQ[a * mk + c], K[t * mk + c] += w.W0[t * m + a] * w.WK[a * mk + c];
      for (int y = 0; y < d; ++y) M[t * d + y] += w.W0[t * m + a] * w.W1[a * d + y];
    }
  double spread = 0;
  for (int t = 0; t < d; ++t)
    for (int i = 0; i < d; ++i) {
      for (int c = 0; c < mk; ++c) S[t * d + i] += Q[t * mk + c] * K[i * mk + c];
      spread = std::max(spread, std::abs(S[t * d + i] - S[t * d]));
    }
  ASSERT_GT(spread, 1000.0);  // the far-apart case is reached
  double direct = 0;
  for (std::int64_t j = 0; j < items.size(); ++j) {
    const int t = items.last[j];
    const double* n = &items.counts[j * d];
    double zmax = -INFINITY, Z = 0;
    for (int i = 0; i < d; ++i)
      if (n[i] > 0) zmax = std::max(zmax, S[t * d + i]);
    std::vector<double> alpha(d, 0.0), logits(d, 0.0);
    for (int i = 0; i < d; ++i)
      if (n[i] > 0) Z += alpha[i] = n[i] * std::exp(S[t * d + i] - zmax);
    for (int i = 0; i < d; ++i)
      for (int y = 0; y < d; ++y) logits[y] += alpha[i] / Z * M[i * d + y];
    const double lmax = *std::max_element(logits.begin(), logits.end());
    double se = 0;
    for (int y = 0; y < d; ++y) se += std::exp(logits[y] - lmax);
    for (int y = 0; y < d; ++y) direct += items.weight[j] * items.target[j * d + y] * (lmax + std::log(se) - logits[y]);
  }
  const double loss = evaluate_one_layer(shape, theta.data(), items, grad.data(), MPI_COMM_SELF).loss;
  EXPECT_NEAR(loss, direct, 1e-12 * direct);
  for (double g : grad) ASSERT_TRUE(std::isfinite(g));
}

// The population loss is the expectation of a sampled sequence's loss: a sample of 20000 has it within
// 4 standard errors (the per-sequence losses' spread over sqrt N).
TEST(Markov, PopulationLossEqualsLargeSampleMean) {
  const MarkovChain chain = paper_chain();
  const OneLayerShape shape{4, 6, 4, false, 1.0};
  const std::vector<double> theta = random_theta(shape, 0.8, 5);
  const double exact = evaluate_one_layer(shape, theta.data(), all_population(chain, 8), nullptr, MPI_COMM_SELF).loss;
  const std::int64_t n = 20000;
  SequenceItems one = sample_items(chain, 8, 1, 9, Partition(1, 1), 0);
  double s1 = 0, s2 = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::vector<int> x = sample_sequence(chain, 8, 9, i);
    std::fill(one.counts.begin(), one.counts.end(), 0.0);
    std::fill(one.target.begin(), one.target.end(), 0.0);
    for (int k = 0; k < 8; ++k) one.counts[x[k]] += 1;
    one.last[0] = x[7];
    one.weight[0] = 1;
    one.target[x[8]] = 1;
    const double l = evaluate_one_layer(shape, theta.data(), one, nullptr, MPI_COMM_SELF).loss;
    s1 += l, s2 += l * l;
  }
  const double mean = s1 / n, se = std::sqrt((s2 / n - mean * mean) / (n - 1));
  EXPECT_LT(std::abs(mean - exact), 4 * se) << "sample " << mean << " +- " << se << ", population " << exact;
  // The whole sample at once gives the same mean (equal weights 1/N).
  const double batch = evaluate_one_layer(shape, theta.data(), sample_items(chain, 8, n, 9, Partition(n, 1), 0), nullptr,
                                          MPI_COMM_SELF).loss;
  EXPECT_NEAR(batch, mean, 1e-12);
}

// At eps -> 0 the logits vanish: the loss is ln d (to O(eps^2)), the attention uniform (entropy 1).
TEST(Markov, InitialLossIsLogD) {
  const OneLayerShape shape{4, 8, 8, false, 1.0};
  const std::vector<double> theta = random_theta(shape, 1e-8, 1);
  const OneLayerEvaluation e = evaluate_one_layer(shape, theta.data(), all_population(paper_chain(), 10), nullptr,
                                                  MPI_COMM_SELF);
  EXPECT_NEAR(e.loss, std::log(4.0), 1e-12);
  EXPECT_NEAR(e.entropy, 1.0, 1e-12);
}

// The focus matrix A = W0^T H W0 moves the attention maps: the gradient (checked against central differences
// above) has dWQ/dt = -dL/dWQ = A WK and dWK/dt = A^T WQ, to round-off (1e-12 of the gradient's size), with
// and without the temperature. The growth rate of sqrt(|WQ|^2 + |WK|^2) is at most sigma_max(A).
TEST(Markov, FocusMatrixMovesTheAttentionMaps) {
  for (double tau : {1.0, std::sqrt(5.0)}) {
    const OneLayerShape shape{4, 5, 3, false, tau};
    const std::vector<double> theta = random_theta(shape, 0.7, 12);
    std::vector<double> grad(shape.size());
    const OneLayerEvaluation e = evaluate_one_layer(shape, theta.data(), all_population(paper_chain(), 6), grad.data(),
                                                    MPI_COMM_SELF);
    const std::vector<double> A = focus_matrix(shape, theta.data(), e.score_gradient);  // [m, m]
    const int m = shape.m, mk = shape.mk;
    const double* WQ = &theta[shape.wq()];
    const double* WK = &theta[shape.wk()];
    double size = 0, worst = 0, along = 0, qk = 0;
    for (int a = 0; a < m; ++a)
      for (int c = 0; c < mk; ++c) {
        double awk = 0, atwq = 0;  // (A WK)[a, c], (A^T WQ)[a, c]
        for (int b = 0; b < m; ++b) awk += A[a * m + b] * WK[b * mk + c], atwq += A[b * m + a] * WQ[b * mk + c];
        const double gq = grad[shape.wq() + a * mk + c], gk = grad[shape.wk() + a * mk + c];
        worst = std::max({worst, std::abs(awk + gq), std::abs(atwq + gk)});
        size = std::max({size, std::abs(gq), std::abs(gk)});
        along += WQ[a * mk + c] * awk;
        qk += WQ[a * mk + c] * WQ[a * mk + c] + WK[a * mk + c] * WK[a * mk + c];
      }
    EXPECT_LT(worst, 1e-12 * size) << "tau " << tau;
    EXPECT_LE(2 * along / qk, singular_values(A.data(), m, m)[0] * (1 + 1e-12)) << "tau " << tau;
  }
  const OneLayerEvaluation loss_only = evaluate_one_layer(OneLayerShape{4, 5, 3, false, 1.0},
                                                          random_theta({4, 5, 3, false, 1.0}, 0.7, 12).data(),
                                                          all_population(paper_chain(), 6), nullptr, MPI_COMM_SELF);
  EXPECT_TRUE(loss_only.score_gradient.empty());
}

// The model is invariant under W0 -> W0 (I + eA), W1, WQ, WK -> (I - eA) (.) and WQ -> WQ (I + eB),
// WK -> WK (I - eB^T): the gradient is orthogonal to both generators (what conserves C_m and C_k).
TEST(Markov, GradientIsOrthogonalToTheSymmetries) {
  const OneLayerShape shape{4, 5, 3, true, 1.0};
  const std::vector<double> theta = random_theta(shape, 0.6, 2);
  std::vector<double> grad(shape.size());
  evaluate_one_layer(shape, theta.data(), all_population(paper_chain(), 6), grad.data(), MPI_COMM_SELF);
  const int d = shape.d, m = shape.m, mk = shape.mk;
  std::vector<double> A(m * m), B(mk * mk);
  RandomStream(4, Purpose::test).normals(0, 0, A.data(), A.size());
  RandomStream(4, Purpose::test).normals(0, 1, B.data(), B.size());
  std::vector<double> dA(shape.size(), 0.0), dB(shape.size(), 0.0);
  const double* W0 = &theta[shape.w0()];
  for (int i = 0; i < d; ++i)  // W0 A
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < m; ++b) dA[shape.w0() + i * m + b] += W0[i * m + a] * A[a * m + b];
  for (std::size_t off : {shape.wq(), shape.wk(), shape.w1()}) {  // -A W for WQ, WK [m, mk] and W1 [m, d]
    const int cols = off == shape.w1() ? d : mk;
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < m; ++b)
        for (int c = 0; c < cols; ++c) dA[off + a * cols + c] -= A[a * m + b] * theta[off + b * cols + c];
  }
  for (int a = 0; a < m; ++a)  // WQ B and -WK B^T
    for (int b = 0; b < mk; ++b)
      for (int c = 0; c < mk; ++c) {
        dB[shape.wq() + a * mk + c] += theta[shape.wq() + a * mk + b] * B[b * mk + c];
        dB[shape.wk() + a * mk + c] -= theta[shape.wk() + a * mk + b] * B[c * mk + b];
      }
  for (const std::vector<double>* delta : {&dA, &dB}) {
    const double dot = std::inner_product(grad.begin(), grad.end(), delta->begin(), 0.0);
    EXPECT_LT(std::abs(dot), 1e-13 * norm(grad) * norm(*delta));
  }
}

// Stage I: sigma* = the top singular value of G = E[c (e_y - 1/d)^T]. For the paper's pi, s = 32,
// lam = 0.5, x_1 ~ pi, an independent NumPy computation gives 0.464; sigma_1 = |pi| |pi - 1/d| = 0.4595
// is its limit for long stationary sequences (s = 64 is closer than s = 32).
TEST(Markov, StageOneRate) {
  const MarkovChain chain = paper_chain();
  double sigma1 = 0, a = 0, b = 0;
  for (double p : chain.pi) a += p * p, b += (p - 0.25) * (p - 0.25);
  sigma1 = std::sqrt(a * b);
  EXPECT_NEAR(sigma1, 0.4595, 5e-5);
  const std::vector<double> g32 = stage_one_matrix(all_population(chain, 32), false, MPI_COMM_SELF);
  const double s32 = singular_values(g32.data(), 4, 4)[0];
  EXPECT_NEAR(s32, 0.464, 5e-4);
  const std::vector<double> g64 = stage_one_matrix(all_population(chain, 64), false, MPI_COMM_SELF);
  EXPECT_LT(std::abs(singular_values(g64.data(), 4, 4)[0] - sigma1), std::abs(s32 - sigma1));
  // singular_values against a diagonal matrix with known entries, rectangular both ways.
  const std::vector<double> r = {3, 0, 0, 0, -2, 0};  // [2, 3]
  const std::vector<double> sv = singular_values(r.data(), 2, 3);
  EXPECT_NEAR(sv[0], 3, 1e-14);
  EXPECT_NEAR(sv[1], 2, 1e-14);
}

// Items spread over the ranks of the world give the loss and gradient of all items on one process to
// 1e-12 (only the order of the sums differs), the same bits on every rank.
TEST(Markov, RankIndependence) {
  const Comm comm;
  const MarkovChain chain = paper_chain();
  const OneLayerShape shape{4, 6, 5, true, std::sqrt(6.0)};
  const std::vector<double> theta = random_theta(shape, 0.5, 8);
  std::vector<double> g_world(shape.size()), g_self(shape.size());
  for (int mode = 0; mode < 2; ++mode) {
    const SequenceItems world = mode == 0 ? population_items(chain, 12, comm.size(), comm.rank(), 1 << 24)
                                          : sample_items(chain, 12, 301, 5, Partition(301, comm.size()), comm.rank());
    const SequenceItems self = mode == 0 ? all_population(chain, 12) : sample_items(chain, 12, 301, 5, Partition(301, 1), 0);
    const double lw = evaluate_one_layer(shape, theta.data(), world, g_world.data(), comm.get()).loss;
    const double ls = evaluate_one_layer(shape, theta.data(), self, g_self.data(), MPI_COMM_SELF).loss;
    EXPECT_NEAR(lw, ls, 1e-12 * ls);
    std::vector<double> diff(shape.size());
    for (std::size_t k = 0; k < diff.size(); ++k) diff[k] = g_world[k] - g_self[k];
    EXPECT_LT(norm(diff), 1e-12 * norm(g_self));
    // Every rank holds rank 0's bits.
    std::vector<double> root = g_world;
    MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_DOUBLE, 0, comm.get());
    EXPECT_EQ(root, g_world);
  }
}

// Characters (UTF-8 code points, sorted) or bytes; windows of s tokens with the next one as target.
TEST(Markov, TextWindows) {
  const Comm comm;
  const std::string path = "markov_text.txt";  // rank 0 reads it for every rank
  if (comm.root()) {
    std::ofstream out(path, std::ios::binary);
    out << "ab\xc3\xa9" "ba\xc3\xa9";  // a b é b a é
  }
  comm.barrier();
  const TokenizedText chars = tokenize_text(comm, path, false, "markov.text_file");
  ASSERT_EQ(chars.vocabulary.size(), 3u);
  EXPECT_EQ(chars.vocabulary[2], "\xc3\xa9");
  EXPECT_EQ(chars.tokens, (std::vector<int>{0, 1, 2, 1, 0, 2}));
  EXPECT_EQ(tokenize_text(comm, path, true, "markov.text_file").vocabulary.size(), 4u);  // a, b, 0xc3, 0xa9
  EXPECT_EQ(text_windows(chars, 3, 1), 3);
  const SequenceItems items = text_items(chars, 3, 1, Partition(3, 1), 0);
  EXPECT_EQ(items.last, (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(items.counts, (std::vector<double>{1, 1, 1, 0, 2, 1, 1, 1, 1}));
  EXPECT_EQ(items.target[0 * 3 + 1], 1);  // after "abé" comes b
  comm.barrier();
  if (comm.root()) {
    std::ofstream out(path, std::ios::binary);
    out << "a\xc3";
  }
  comm.barrier();
  EXPECT_THROW(tokenize_text(comm, path, false, "markov.text_file"), InputError);
  comm.barrier();
  if (comm.root()) std::remove(path.c_str());
}

// A text longer than the reader's 1 MiB pieces, its characters of 1 to 4 bytes cut by the pieces' ends,
// against the plain reference (the whole file as one string, one symbol string per position); a text whose
// tokens exceed the memory limit is refused before it is read.
TEST(Markov, TextInPieces) {
  const Comm comm;
  const std::string path = "markov_pieces.txt";
  const char* symbols[] = {"a", "b", "\n", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xd0\xb6"};
  std::string data;
  for (std::uint64_t k = 0; data.size() < (std::size_t(5) << 19); ++k)  // 2.5 MiB
    data += symbols[(k * 2654435761u >> 7) % 7];
  if (comm.root()) std::ofstream(path, std::ios::binary) << data;
  comm.barrier();
  const TokenizedText text = tokenize_text(comm, path, false, "train.text_file");
  // Reference: split by the lead byte, sorted distinct strings, ids by position.
  std::vector<std::string> each;
  for (std::size_t k = 0; k < data.size();) {
    const auto c = static_cast<unsigned char>(data[k]);
    const std::size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    each.push_back(data.substr(k, len));
    k += len;
  }
  std::vector<std::string> vocabulary = each;
  std::sort(vocabulary.begin(), vocabulary.end());
  vocabulary.erase(std::unique(vocabulary.begin(), vocabulary.end()), vocabulary.end());
  ASSERT_EQ(text.vocabulary, vocabulary);
  ASSERT_EQ(text.tokens.size(), each.size());
  for (std::size_t k = 0; k < each.size(); ++k)
    ASSERT_EQ(text.vocabulary[text.tokens[k]], each[k]) << "at symbol " << k;
  try {
    tokenize_text(comm, path, false, "train.text_file", 1e6);
    ADD_FAILURE() << "a 2.5 MB text under a 1 MB limit was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than the"), std::string::npos) << e.what();
  }
  comm.barrier();
  if (comm.root()) std::remove(path.c_str());
}
