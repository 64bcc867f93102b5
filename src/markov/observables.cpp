#include "tokdyn/markov/observables.hpp"

#include <cmath>

#include "tokdyn/core/lapack.hpp"

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

// |<v, u>| / (|v| |u|) for v the top eigenvector of the symmetric gram [n, n].
double top_alignment(const std::vector<double>& gram, int n, const std::vector<double>& u) {
  std::vector<double> w(n), vectors(gram.size());
  symmetric_eigensolve(n, gram.data(), w.data(), vectors.data());
  double dot = 0, nu = 0;
  for (int i = 0; i < n; ++i) dot += vectors[static_cast<std::size_t>(i) * n + (n - 1)] * u[i], nu += u[i] * u[i];
  return nu > 0 ? std::abs(dot) / std::sqrt(nu) : 0.0;
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

std::vector<double> top_left_singular_vector(const std::vector<double>& G, int d) {
  std::vector<double> gram(static_cast<std::size_t>(d) * d, 0.0), w(d), vectors(gram.size());
  add_gram(G.data(), d, d, false, 1, gram);
  symmetric_eigensolve(d, gram.data(), w.data(), vectors.data());
  std::vector<double> u(d);
  for (int i = 0; i < d; ++i) u[i] = vectors[static_cast<std::size_t>(i) * d + (d - 1)];
  return u;
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
  // u_1(W0): the top eigenvector of W0 W0^T [d, d]; v_1(W1): of W1^T W1 [d, d].
  std::vector<double> g0(static_cast<std::size_t>(d) * d, 0.0), g1(g0.size(), 0.0);
  add_gram(W0, d, m, false, 1, g0);
  add_gram(W1, m, d, true, 1, g1);
  std::vector<double> centred(pi);
  for (double& v : centred) v -= 1.0 / d;
  o.cos_w0_pi = top_alignment(g0, d, pi);
  o.cos_w1_pi = top_alignment(g1, d, centred);
  o.cos_w0_g = top_alignment(g0, d, g_direction);
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
  return o;
}

}  // namespace tokdyn
