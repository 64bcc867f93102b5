// The one-layer, one-head transformer of doc/science.md section 8 (no LayerNorm), float64:
//   a      = softmax_j( x_s^T W0 WQ WK^T W0^T x_j / tau )       over the s positions j
//   logits = sum_j a_j W1^T W0^T x_j  (+ W1^T W0^T x_s with the residual)
//   loss   = cross-entropy(logits, y), the weighted mean over the items of every rank
// with W0 [d, m] (row i: the embedding of token i), WQ, WK [m, mk], W1 [m, d]. A score depends on a
// position only through its token, so on an item (last token t, counts n) the attention is a law over
// tokens, alpha_i = n_i e^{S_ti} / sum_k n_k e^{S_tk}, with S = (W0 WQ)(W0 WK)^T / tau [d, d] and the
// output map M = W0 W1 [d, d] formed once per evaluation: an item costs O(d^2), the products
// O(d m (mk + d)). The forward and backward passes are plain loops (src/markov/one_layer.cpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tokdyn/markov/sequences.hpp"

namespace tokdyn {

// The four matrices inside a flat parameter vector.
struct OneLayerWeights {
  const double* W0;  // [d, m]
  const double* WQ;  // [m, mk]
  const double* WK;  // [m, mk]
  const double* W1;  // [m, d]
};

struct OneLayerShape {
  int d = 4, m = 8, mk = 8;
  bool residual = false;
  double tau = 1;  // 1 or sqrt(m)
  // The flat parameter vector: W0 [d, m], WQ [m, mk], WK [m, mk], W1 [m, d], in this order.
  std::size_t w0() const { return 0; }
  std::size_t wq() const { return static_cast<std::size_t>(d) * m; }
  std::size_t wk() const { return wq() + static_cast<std::size_t>(m) * mk; }
  std::size_t w1() const { return wk() + static_cast<std::size_t>(m) * mk; }
  std::size_t size() const { return w1() + static_cast<std::size_t>(m) * d; }
  OneLayerWeights weights(const double* theta) const { return {theta + w0(), theta + wq(), theta + wk(), theta + w1()}; }
};

// What one evaluation measures besides the gradient (weighted means over the items of every rank).
struct OneLayerEvaluation {
  double loss = 0;
  double entropy = 0;        // H(a) / log s, a the attention over positions
  std::vector<double> mass;  // [d] attention mass on each token (next to its frequency in the context)
  std::vector<double> score_gradient;  // [d, d] dL/dS, S = Phi / tau the scores by token pair; only with a gradient
};

// Collective: the loss and, when grad is not null, its gradient [size] at theta [size]; the same bits
// on every rank (the items' sums are reduced on rank 0 and broadcast).
OneLayerEvaluation evaluate_one_layer(const OneLayerShape& shape, const double* theta, const SequenceItems& items,
                                      double* grad, MPI_Comm comm);

// The focus matrix A = W0^T H W0 [m, m], H = -dL/dPhi = -score_gradient / tau [d, d] (Phi = W0 WQ WK^T W0^T).
// The flow moves the attention maps by dWQ/dt = A WK and dWK/dt = A^T WQ, so while A changes slowly they grow
// at its top singular value, the focus rate (doc/science.md section 8.4).
std::vector<double> focus_matrix(const OneLayerShape& shape, const double* theta,
                                 const std::vector<double>& score_gradient);

// Every entry iid N(0, eps^2): matrix k (W0, WQ, WK, W1) row r from the stream (seed, markov_init, k, r).
void initial_one_layer(const OneLayerShape& shape, double eps, std::uint64_t seed, double* theta);

// Stage I (doc/science.md section 8.3): at eps -> 0 the attention is uniform and the flow is that of the
// two-layer linear map driven by G = E[c (e_y - 1/d)^T] [d, d], c the context's token frequencies
// (plus e_{x_s} with the residual). Collective; the same on every rank.
std::vector<double> stage_one_matrix(const SequenceItems& items, bool residual, MPI_Comm comm);
// Singular values of a [rows, cols], largest first (from the eigenvalues of the smaller Gram matrix).
std::vector<double> singular_values(const double* a, int rows, int cols);

}  // namespace tokdyn
