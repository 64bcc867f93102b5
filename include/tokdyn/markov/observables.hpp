// What tokdyn markov records along the flow (doc/science.md section 8.4): the loss, the attention's
// entropy and mass per token, the alignments that show the stages (u_1(W0) with pi, v_1(W1) with
// pi - 1/d, Phi = W0 WQ WK^T W0^T with pi pi^T), all singular values of W0, W1, WQ, WK, the row norms of
// W0, and the drift of the conserved C_m = W0^T W0 - W1 W1^T - WQ WQ^T - WK WK^T and C_k = WQ^T WQ -
// WK^T WK relative to the size of their terms.
#pragma once

#include <vector>

#include "tokdyn/markov/one_layer.hpp"

namespace tokdyn {

struct Conserved {
  std::vector<double> cm, ck;  // [m, m], [mk, mk]
  double scale_m = 0, scale_k = 0;  // sum of the Frobenius norms of their terms
};
Conserved conserved_quantities(const OneLayerShape& shape, const double* theta);

struct MarkovObservables {
  double loss = 0, entropy = 0;
  std::vector<double> mass;                      // [d]
  double cos_w0_pi = 0, cos_w1_pi = 0, cos_phi = 0;
  double cos_w0_g = 0;                           // u_1(W0) with u_1(G), G the stage-I matrix
  std::vector<double> sv_w0, sv_w1, sv_wq, sv_wk;  // largest first
  std::vector<double> row_norms;                 // [d] of W0
  double drift_m = 0, drift_k = 0;               // |C(t) - C(0)|_F / the sum of |term(t)|_F
  double norm_wq = 0, norm_wk = 0;               // Frobenius
  // The focus rate sigma_max(A), A = W0^T H W0 (focus_matrix), next to the growth rate of the attention maps
  // d/dt ln sqrt(|WQ|^2 + |WK|^2) = 2 <WQ, A WK> / (|WQ|^2 + |WK|^2), which it bounds (equal when WQ and WK
  // are balanced and lie along A's top singular pair).
  double focus_rate = 0, qk_rate = 0;
};

// pi: the reference law [d] (the chain's stationary law, or a text's token frequencies); g_direction:
// u_1(G) [d]; e: the evaluation at theta with its gradient (e.score_gradient).
MarkovObservables markov_observables(const OneLayerShape& shape, const double* theta, const OneLayerEvaluation& e,
                                     const std::vector<double>& pi, const std::vector<double>& g_direction,
                                     const Conserved& initial);

}  // namespace tokdyn
