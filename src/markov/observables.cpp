#include "tokdyn/markov/observables.hpp"

#include <cmath>

#include "tokdyn/core/numerics/lapack.hpp"

namespace tokdyn {
namespace {

// out [rows, rows] = a a^T (sign = +1) or += sign a a^T, a [rows, cols]; transposed: a^T a [cols, cols].
void add_gram(const double* a, int rows, int cols, bool transposed, double sign, std::vector<double>& out) {
  const int n = transposed ? cols : rows;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      if (transposed)
        for (int k = 0; k < rows; ++k) s += a[k * cols + i] * a[k * cols + j];
      else
        for (int k = 0; k < cols; ++k) s += a[i * cols + k] * a[j * cols + k];
      out[static_cast<std::size_t>(i) * n + j] += sign * s;
    }
}

double frobenius(const std::vector<double>& a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

// |<x, u>| / |u| for x the top left singular vector of a [rows, cols] (transposed: of a^T), from the
// eigenvectors of the small Gram matrix [cols, cols] (transposed: [rows, rows]): O(rows cols^2), where the
// eigensolve of the large one costs O(rows^3), minutes for a vocabulary of thousands.
double top_alignment(const double* a, int rows, int cols, bool transposed, const std::vector<double>& u) {
  const int n = transposed ? cols : rows, k = transposed ? rows : cols;
  std::vector<double> gram(static_cast<std::size_t>(k) * k, 0.0), w(k), vectors(gram.size());
  add_gram(a, rows, cols, !transposed, 1, gram);
  symmetric_eigensolve(k, gram.data(), w.data(), vectors.data());
  // x = a y (transposed: a^T y) for y the top eigenvector of the small Gram matrix.
  std::vector<double> x(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j)
      x[i] += (transposed ? a[static_cast<std::size_t>(j) * cols + i] : a[static_cast<std::size_t>(i) * cols + j]) *
              vectors[static_cast<std::size_t>(j) * k + (k - 1)];
  double dot = 0, nx = 0, nu = 0;
  for (int i = 0; i < n; ++i) dot += x[i] * u[i], nx += x[i] * x[i], nu += u[i] * u[i];
  return nx > 0 && nu > 0 ? std::abs(dot) / std::sqrt(nx * nu) : 0.0;
}

}  // namespace

Conserved conserved_quantities(const OneLayerShape& shape, const double* theta) {
  const int d = shape.d, m = shape.m, mk = shape.mk;
  const auto [W0, WQ, WK, W1] = shape.weights(theta);
  Conserved c;
  c.cm.assign(static_cast<std::size_t>(m) * m, 0.0);
  c.ck.assign(static_cast<std::size_t>(mk) * mk, 0.0);
  // Each term on its own for the scale, then summed.
  const struct {
    const double* a;
    int rows, cols;
    bool transposed;
    double sign;
    bool k;
  } terms[] = {{W0, d, m, true, 1, false},   {W1, m, d, false, -1, false}, {WQ, m, mk, false, -1, false},
               {WK, m, mk, false, -1, false}, {WQ, m, mk, true, 1, true},   {WK, m, mk, true, -1, true}};
  for (const auto& t : terms) {
    std::vector<double> one(t.k ? c.ck.size() : c.cm.size(), 0.0);
    add_gram(t.a, t.rows, t.cols, t.transposed, t.sign, one);
    std::vector<double>& target = t.k ? c.ck : c.cm;
    for (std::size_t i = 0; i < one.size(); ++i) target[i] += one[i];
    (t.k ? c.scale_k : c.scale_m) += frobenius(one);
  }
  return c;
}

MarkovObservables markov_observables(const OneLayerShape& shape, const double* theta, const OneLayerEvaluation& e,
                                     const std::vector<double>& pi, const std::vector<double>& g_direction,
                                     const Conserved& initial) {
  const int d = shape.d, m = shape.m, mk = shape.mk;
  const auto [W0, WQ, WK, W1] = shape.weights(theta);
  MarkovObservables o;
  o.loss = e.loss;
  o.entropy = e.entropy;
  o.mass = e.mass;
  o.sv_w0 = singular_values(W0, d, m);
  o.sv_w1 = singular_values(W1, m, d);
  o.sv_wq = singular_values(WQ, m, mk);
  o.sv_wk = singular_values(WK, m, mk);
  // u_1(W0): the top left singular vector of W0 [d, m]; v_1(W1): the top right one of W1 [m, d].
  std::vector<double> centred(pi);
  for (double& v : centred) v -= 1.0 / d;
  o.cos_w0_pi = top_alignment(W0, d, m, false, pi);
  o.cos_w1_pi = top_alignment(W1, m, d, true, centred);
  o.cos_w0_g = top_alignment(W0, d, m, false, g_direction);
  // Phi = (W0 WQ)(W0 WK)^T [d, d] against pi pi^T.
  std::vector<double> Q(static_cast<std::size_t>(d) * mk, 0.0), K(Q.size(), 0.0);
  for (int i = 0; i < d; ++i)
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < mk; ++b) {
        Q[i * mk + b] += W0[i * m + a] * WQ[a * mk + b];
        K[i * mk + b] += W0[i * m + a] * WK[a * mk + b];
      }
  double dot = 0, nphi = 0, npp = 0;
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      double phi = 0;
      for (int b = 0; b < mk; ++b) phi += Q[i * mk + b] * K[j * mk + b];
      dot += phi * pi[i] * pi[j], nphi += phi * phi, npp += pi[i] * pi[i] * pi[j] * pi[j];
    }
  o.cos_phi = nphi > 0 ? dot / std::sqrt(nphi * npp) : 0.0;
  o.row_norms.resize(d);
  for (int i = 0; i < d; ++i) {
    double s = 0;
    for (int a = 0; a < m; ++a) s += W0[i * m + a] * W0[i * m + a];
    o.row_norms[i] = std::sqrt(s);
  }
  const Conserved now = conserved_quantities(shape, theta);
  std::vector<double> dm(now.cm.size()), dk(now.ck.size());
  for (std::size_t i = 0; i < dm.size(); ++i) dm[i] = now.cm[i] - initial.cm[i];
  for (std::size_t i = 0; i < dk.size(); ++i) dk[i] = now.ck[i] - initial.ck[i];
  // Relative to the terms' size now: they grow by orders of magnitude from eps^2 while C stays put.
  o.drift_m = now.scale_m > 0 ? frobenius(dm) / now.scale_m : 0.0;
  o.drift_k = now.scale_k > 0 ? frobenius(dk) / now.scale_k : 0.0;
  o.norm_wq = frobenius(std::vector<double>(WQ, WQ + static_cast<std::size_t>(m) * mk));
  o.norm_wk = frobenius(std::vector<double>(WK, WK + static_cast<std::size_t>(m) * mk));
  const std::vector<double> A = focus_matrix(shape, theta, e.score_gradient);  // [m, m]
  o.focus_rate = singular_values(A.data(), m, m)[0];
  double along = 0;  // <WQ, A WK>
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b)
      for (int c = 0; c < mk; ++c) along += WQ[a * mk + c] * A[static_cast<std::size_t>(a) * m + b] * WK[b * mk + c];
  const double size = o.norm_wq * o.norm_wq + o.norm_wk * o.norm_wk;
  o.qk_rate = size > 0 ? 2 * along / size : 0.0;
  return o;
}

}  // namespace tokdyn
