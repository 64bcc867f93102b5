#include "tokdyn/markov/one_layer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/lapack.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {
namespace {

// c [rows, cols] = a [rows, inner] b [inner, cols] (plain loops: these matrices are small).
void product(const double* a, const double* b, double* c, int rows, int inner, int cols) {
  std::fill(c, c + static_cast<std::size_t>(rows) * cols, 0.0);
  for (int i = 0; i < rows; ++i)
    for (int k = 0; k < inner; ++k) {
      const double aik = a[i * inner + k];
      for (int j = 0; j < cols; ++j) c[i * cols + j] += aik * b[k * cols + j];
    }
}

// c [rows, cols] += a^T b with a [inner, rows], b [inner, cols].
void add_matmul_tn(const double* a, const double* b, double* c, int rows, int inner, int cols) {
  for (int k = 0; k < inner; ++k)
    for (int i = 0; i < rows; ++i) {
      const double aki = a[k * rows + i];
      for (int j = 0; j < cols; ++j) c[i * cols + j] += aki * b[k * cols + j];
    }
}

// c [rows, cols] += a b^T with a [rows, inner], b [cols, inner].
void add_matmul_nt(const double* a, const double* b, double* c, int rows, int inner, int cols) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      double s = 0;
      for (int k = 0; k < inner; ++k) s += a[i * inner + k] * b[j * inner + k];
      c[i * cols + j] += s;
    }
}

// Sums buffer over the ranks: reduced on rank 0 and broadcast, so every rank holds the same bits.
void sum_everywhere(std::vector<double>& buffer, MPI_Comm comm) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::vector<double> total(buffer.size());
  // In pieces: 2 d^2 values pass MPI's int count at d = 32768.
  const auto in_pieces = [&](const auto& call) {
    for (std::size_t done = 0; done < buffer.size();) {
      const int piece = static_cast<int>(std::min<std::size_t>(buffer.size() - done, std::size_t{1} << 28));
      call(done, piece);
      done += piece;
    }
  };
  in_pieces([&](std::size_t at, int n) {
    TOKDYN_MPI_CHECK(MPI_Reduce(buffer.data() + at, total.data() + at, n, MPI_DOUBLE, MPI_SUM, 0, comm));
  });
  if (rank == 0) buffer = total;
  in_pieces([&](std::size_t at, int n) { TOKDYN_MPI_CHECK(MPI_Bcast(buffer.data() + at, n, MPI_DOUBLE, 0, comm)); });
}

}  // namespace

OneLayerEvaluation evaluate_one_layer(const OneLayerShape& shape, const double* theta, const SequenceItems& items,
                                      double* grad, MPI_Comm comm) {
  const int d = shape.d, m = shape.m, mk = shape.mk;
  const auto [W0, WQ, WK, W1] = shape.weights(theta);
  const std::size_t dd = static_cast<std::size_t>(d) * d;
  std::vector<double> Q(static_cast<std::size_t>(d) * mk), K(Q.size()), S(dd), M(dd);
  product(W0, WQ, Q.data(), d, m, mk);  // [d, mk] queries of each token
  product(W0, WK, K.data(), d, m, mk);  // [d, mk] keys of each token
  std::fill(S.begin(), S.end(), 0.0);
  add_matmul_nt(Q.data(), K.data(), S.data(), d, mk, d);  // [d, d] S_ti = <q_t, k_i>
  for (double& v : S) v /= shape.tau;
  product(W0, W1, M.data(), d, m, d);  // [d, d] logits of token i's embedding

  // One buffer reduced at once: dS [d, d], dM [d, d], loss, entropy, mass [d].
  std::vector<double> acc(2 * dd + 2 + d, 0.0);
  double* dS = acc.data();
  double* dM = dS + dd;
  double& loss = acc[2 * dd];
  double& entropy = acc[2 * dd + 1];
  double* mass = acc.data() + 2 * dd + 2;
  const double log_s = std::log(static_cast<double>(items.s));
  // E [d, d] = e^{S_ti - Smax_t} with Smax_t the row's largest score: each exponential once per evaluation, not
  // once per item (an item's weights are its counts times a row of E, normalised). An item whose present tokens
  // all score more than kFarBelow under Smax_t would underflow there: it takes its own exponentials.
  constexpr double kFarBelow = 600;
  std::vector<double> E(dd), Smax(d);
  for (int t = 0; t < d; ++t) {
    const double* St = &S[static_cast<std::size_t>(t) * d];
    Smax[t] = *std::max_element(St, St + d);
    for (int i = 0; i < d; ++i) E[static_cast<std::size_t>(t) * d + i] = std::exp(St[i] - Smax[t]);
  }
  std::vector<double> alpha(d), logits(d), g(d), dalpha(d);
  std::vector<int> present(d);  // the tokens of the item (n_i > 0): absent ones carry no attention
  for (std::int64_t j = 0; j < items.size(); ++j) {
    const int t = items.last[j];
    const double* n = &items.counts[j * d];
    const double* q = &items.target[j * d];
    const double w = items.weight[j];
    const double* St = &S[static_cast<std::size_t>(t) * d];
    int np = 0;
    for (int i = 0; i < d; ++i)
      if (n[i] > 0) present[np++] = i;
    // Attention over positions, grouped by token: alpha_i = n_i e^{S_ti - zmax} / Z, from E's row (zmax = Smax_t).
    double zmax = -INFINITY;
    for (int k = 0; k < np; ++k) zmax = std::max(zmax, St[present[k]]);
    const bool own = zmax < Smax[t] - kFarBelow;
    if (!own) zmax = Smax[t];
    const double* Et = &E[static_cast<std::size_t>(t) * d];
    double Z = 0;
    for (int k = 0; k < np; ++k) {
      const int i = present[k];
      alpha[i] = n[i] * (own ? std::exp(St[i] - zmax) : Et[i]);
      Z += alpha[i];
    }
    const double log_z = std::log(Z);
    double h = 0;  // entropy over positions: each of the n_i positions of token i has log weight S_ti - zmax - log Z
    for (int k = 0; k < np; ++k) {
      const int i = present[k];
      alpha[i] /= Z;
      if (alpha[i] > 0) h -= alpha[i] * (St[i] - zmax - log_z);
      mass[i] += w * alpha[i];
    }
    entropy += w * h / log_s;
    // logits [d] = sum_i alpha_i M[i, :] (+ M[t, :]), rows of M in token order.
    if (shape.residual)
      std::copy(&M[static_cast<std::size_t>(t) * d], &M[static_cast<std::size_t>(t) * d] + d, logits.begin());
    else
      std::fill(logits.begin(), logits.end(), 0.0);
    for (int k = 0; k < np; ++k) {
      const int i = present[k];
      const double* Mi = &M[static_cast<std::size_t>(i) * d];
      for (int y = 0; y < d; ++y) logits[y] += alpha[i] * Mi[y];
    }
    double lmax = -INFINITY;
    for (int y = 0; y < d; ++y) lmax = std::max(lmax, logits[y]);
    double se = 0;
    for (int y = 0; y < d; ++y) {
      g[y] = std::exp(logits[y] - lmax);
      se += g[y];
    }
    const double lse = lmax + std::log(se);
    for (int y = 0; y < d; ++y) loss += w * q[y] * (lse - logits[y]);
    if (!grad) {
      for (int k = 0; k < np; ++k) alpha[present[k]] = 0;
      continue;
    }
    // dloss/dlogits_y = w (softmax_y - q_y) (the target law sums to 1).
    for (int y = 0; y < d; ++y) g[y] = w * (g[y] / se - q[y]);
    double abar = 0;
    for (int k = 0; k < np; ++k) {  // dalpha_i = sum_y M_iy g_y, dM[i, :] += alpha_i g
      const int i = present[k];
      const double* Mi = &M[static_cast<std::size_t>(i) * d];
      double* dMi = &dM[static_cast<std::size_t>(i) * d];
      double v = 0;
      for (int y = 0; y < d; ++y) {
        v += Mi[y] * g[y];
        dMi[y] += alpha[i] * g[y];
      }
      dalpha[i] = v;
      abar += alpha[i] * v;
    }
    if (shape.residual)
      for (int y = 0; y < d; ++y) dM[static_cast<std::size_t>(t) * d + y] += g[y];
    // Softmax backward: dS_ti = alpha_i (dalpha_i - sum_k alpha_k dalpha_k).
    for (int k = 0; k < np; ++k) {
      const int i = present[k];
      dS[static_cast<std::size_t>(t) * d + i] += alpha[i] * (dalpha[i] - abar);
      alpha[i] = 0;  // the next item starts from zero attention
    }
  }
  sum_everywhere(acc, comm);

  OneLayerEvaluation out;
  out.loss = loss;
  out.entropy = entropy;
  out.mass.assign(mass, mass + d);
  if (!grad) return out;
  out.score_gradient.assign(dS, dS + dd);
  double* gW0 = grad + shape.w0();
  double* gWQ = grad + shape.wq();
  double* gWK = grad + shape.wk();
  double* gW1 = grad + shape.w1();
  std::fill(grad, grad + shape.size(), 0.0);
  // S = Q K^T / tau: dQ = dS K / tau [d, mk], dK = dS^T Q / tau [d, mk].
  std::vector<double> dQ(Q.size()), dK(K.size());
  product(dS, K.data(), dQ.data(), d, d, mk);
  std::fill(dK.begin(), dK.end(), 0.0);
  add_matmul_tn(dS, Q.data(), dK.data(), d, d, mk);
  for (double& v : dQ) v /= shape.tau;
  for (double& v : dK) v /= shape.tau;
  // Q = W0 WQ, K = W0 WK, M = W0 W1.
  add_matmul_nt(dQ.data(), WQ, gW0, d, mk, m);  // dW0 += dQ WQ^T
  add_matmul_nt(dK.data(), WK, gW0, d, mk, m);  // dW0 += dK WK^T
  add_matmul_nt(dM, W1, gW0, d, d, m);          // dW0 += dM W1^T
  add_matmul_tn(W0, dQ.data(), gWQ, m, d, mk);  // dWQ = W0^T dQ
  add_matmul_tn(W0, dK.data(), gWK, m, d, mk);  // dWK = W0^T dK
  add_matmul_tn(W0, dM, gW1, m, d, d);          // dW1 = W0^T dM
  return out;
}

std::vector<double> focus_matrix(const OneLayerShape& shape, const double* theta,
                                 const std::vector<double>& score_gradient) {
  const int d = shape.d, m = shape.m;
  if (score_gradient.size() != static_cast<std::size_t>(d) * d)
    throw std::logic_error("focus_matrix needs the score gradient of an evaluation with a gradient");
  const double* W0 = shape.weights(theta).W0;
  std::vector<double> HW0(static_cast<std::size_t>(d) * m), A(static_cast<std::size_t>(m) * m, 0.0);
  product(score_gradient.data(), W0, HW0.data(), d, d, m);  // [d, m] (dL/dS) W0
  for (double& v : HW0) v *= -1 / shape.tau;                 // H W0
  add_matmul_tn(W0, HW0.data(), A.data(), m, d, m);          // W0^T H W0
  return A;
}

void initial_one_layer(const OneLayerShape& shape, double eps, std::uint64_t seed, double* theta) {
  const RandomStream stream(seed, Purpose::markov_init);
  const std::size_t offsets[4] = {shape.w0(), shape.wq(), shape.wk(), shape.w1()};
  const int rows[4] = {shape.d, shape.m, shape.m, shape.m}, cols[4] = {shape.m, shape.mk, shape.mk, shape.d};
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < rows[k]; ++r) {
      double* row = theta + offsets[k] + static_cast<std::size_t>(r) * cols[k];
      stream.normals(static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(r), row, static_cast<std::size_t>(cols[k]));
      for (int c = 0; c < cols[k]; ++c) row[c] *= eps;
    }
}

std::vector<double> stage_one_matrix(const SequenceItems& items, bool residual, MPI_Comm comm) {
  const int d = items.d;
  std::vector<double> G(static_cast<std::size_t>(d) * d, 0.0);
  for (std::int64_t j = 0; j < items.size(); ++j) {
    const double w = items.weight[j];
    for (int i = 0; i < d; ++i) {
      const double c = items.counts[j * d + i] / static_cast<double>(items.s) + (residual && items.last[j] == i ? 1.0 : 0.0);
      if (c == 0) continue;
      for (int y = 0; y < d; ++y) G[static_cast<std::size_t>(i) * d + y] += w * c * (items.target[j * d + y] - 1.0 / d);
    }
  }
  sum_everywhere(G, comm);
  return G;
}

std::vector<double> singular_values(const double* a, int rows, int cols) {
  // The Gram matrix of the smaller side: its eigenvalues are the squared singular values.
  const bool tall = rows >= cols;
  const int k = tall ? cols : rows;
  std::vector<double> gram(static_cast<std::size_t>(k) * k, 0.0), w(k), vectors(gram.size());
  if (tall)
    add_matmul_tn(a, a, gram.data(), cols, rows, cols);
  else
    add_matmul_nt(a, a, gram.data(), rows, cols, rows);
  symmetric_eigensolve(k, gram.data(), w.data(), vectors.data());
  std::vector<double> s(k);
  for (int i = 0; i < k; ++i) s[i] = std::sqrt(std::max(0.0, w[k - 1 - i]));
  return s;
}

}  // namespace tokdyn
