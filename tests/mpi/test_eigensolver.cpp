// Distributed layer matrices and eigen-solves against one-rank references: the row blocks of F = O V equal
// layer_matrix, the operator equals F x, and Krylov–Schur (dense MPI matrix and shell operator) and the
// gathered LAPACK solve give dense_eigen's eigenvalues, vectors, left vectors, plane and gap, at any rank count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/mpi/gather.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/spectral/dense_eigen.hpp"
#include "tokdyn/spectral/distributed_layer_matrix.hpp"
#include "tokdyn/spectral/eigensolver.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/weights/synthetic_weights.hpp"

using namespace tokdyn;

namespace {

using Matrix = std::vector<double>;  // [n, n] row-major
using Complex = std::complex<double>;

// Layers held in memory: what a WeightSource must give, with nothing read from a file.
class MemorySource : public WeightSource {
 public:
  explicit MemorySource(std::vector<LayerWeights> layers) : layers_(std::move(layers)) {}
  int d() const override { return layers_[0].d; }
  int heads() const override { return layers_[0].heads; }
  int head_dim() const override { return layers_[0].head_dim; }
  std::int64_t layers() const override { return static_cast<std::int64_t>(layers_.size()); }
  bool shared() const override { return false; }
  double score_scale() const override { return 1; }
  LayerWeights layer(std::int64_t t) const override { return layers_[t]; }
  std::vector<double> output_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override {
    const int w = layers_[t].width();
    return {layers_[t].output.begin() + begin * w, layers_[t].output.begin() + end * w};
  }
  std::vector<double> value_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override {
    const int d = layers_[t].d;
    return {layers_[t].value.begin() + begin * d, layers_[t].value.begin() + end * d};
  }
  bool has_embedding() const override { return false; }
  std::vector<double> embedding(const std::vector<std::int64_t>&) const override {
    throw std::logic_error("no embedding");
  }
  std::string describe() const override { return "memory"; }

 private:
  std::vector<LayerWeights> layers_;
};

std::vector<double> gaussian(std::uint64_t seed, std::uint64_t step, std::size_t n, double scale) {
  std::vector<double> g(n);
  RandomStream(seed, Purpose::test).normals(step, 0, g.data(), n);
  for (double& x : g) x *= scale;
  return g;
}

LayerWeights random_layer(int d, int heads, int head_dim, std::uint64_t seed) {
  LayerWeights w;
  w.d = d, w.heads = heads, w.head_dim = head_dim;
  const std::size_t size = static_cast<std::size_t>(d) * heads * head_dim;
  w.query = gaussian(seed, 0, size, 1), w.key = gaussian(seed, 1, size, 1);
  w.value = gaussian(seed, 2, size, 1), w.output = gaussian(seed, 3, size, 1);
  return w;
}

// A spectrum with a separated top: the named eigenvalues, then a bulk of radius 0.5 (pairs and reals).
// Block upper-triangular B (2 x 2 blocks [a b; -b a] for a +- i b) with a random strictly upper part.
Matrix quasi_triangular(int n, const std::vector<Complex>& top, std::uint64_t seed) {
  std::vector<Complex> values;
  for (const Complex& z : top) {
    values.push_back(z);
    if (z.imag() != 0) values.push_back(std::conj(z));
  }
  const RandomStream rng(seed, Purpose::test);
  for (std::uint64_t k = 0; static_cast<int>(values.size()) < n; ++k) {
    const auto u = rng.uniform4(10, k, 0);
    const Complex z = std::polar(0.5 * std::sqrt(u[0]), 2 * M_PI * u[1]);
    if (u[2] < 0.5 || static_cast<int>(values.size()) == n - 1)
      values.push_back(z.real());
    else
      values.push_back(z), values.push_back(std::conj(z));
  }
  Matrix b(n * n, 0.0);
  const std::vector<double> upper = gaussian(seed, 11, n * n, 0.3 / std::sqrt(n));
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) b[i * n + j] = upper[i * n + j];
  for (int k = 0; k < n; ++k) {
    b[k * n + k] = values[k].real();
    if (values[k].imag() != 0) {
      b[k * n + k + 1] = values[k].imag();
      b[(k + 1) * n + k] = -values[k].imag();
      b[(k + 1) * n + k + 1] = values[k].real();
      ++k;
    }
  }
  return b;
}

// H = I - 2 u u^T of a random unit u: the orthogonal Q = H_1 H_2 H_3 of the similarity Q B Q^T.
std::vector<std::vector<double>> reflectors(int n, std::uint64_t seed) {
  std::vector<std::vector<double>> us;
  for (int r = 0; r < 3; ++r) {
    std::vector<double> u = gaussian(seed, 20 + r, n, 1);
    double s = 0;
    for (double x : u) s += x * x;
    for (double& x : u) x /= std::sqrt(s);
    us.push_back(u);
  }
  return us;
}

// m <- H m (left) or m H (right), H = I - 2 u u^T.
void reflect(Matrix& m, int n, const std::vector<double>& u, bool left) {
  std::vector<double> w(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) w[left ? j : i] += (left ? u[i] : u[j]) * m[i * n + j];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) m[i * n + j] -= 2 * (left ? u[i] * w[j] : w[i] * u[j]);
}

// Q B Q^T: non-symmetric, non-normal, eigenvalues exactly B's. Any rank builds the same matrix.
Matrix known_matrix(int n, const std::vector<Complex>& top, std::uint64_t seed) {
  Matrix a = quasi_triangular(n, top, seed);
  for (const auto& u : reflectors(n, seed)) reflect(a, n, u, true), reflect(a, n, u, false);
  return a;
}

std::vector<double> local_rows(const Matrix& a, int n, const Partition& rows, int rank) {
  return {a.begin() + rows.begin(rank) * n, a.begin() + (rows.begin(rank) + rows.count(rank)) * n};
}

// Row k of a result's vectors, gathered: [d].
std::vector<double> gathered(const Comm& comm, const Partition& rows, const std::vector<double>& v, int k) {
  const std::int64_t n = rows.count(comm.rank());
  return allgather_rows(comm.get(), rows, std::vector<double>(v.begin() + k * n, v.begin() + (k + 1) * n), 1);
}

// The phase the solvers promise (an independent serial version): unit norm, the component of largest
// modulus (lowest index within 1e-8) real and positive.
void reference_phase(std::vector<double>& re, std::vector<double>* im) {
  const int n = static_cast<int>(re.size());
  auto mod = [&](int i) { return std::hypot(re[i], im ? (*im)[i] : 0.0); };
  double largest = 0, norm = 0;
  for (int i = 0; i < n; ++i) largest = std::max(largest, mod(i)), norm += mod(i) * mod(i);
  int first = 0;
  while (mod(first) < (1 - 1e-8) * largest) ++first;
  const Complex c(re[first], im ? (*im)[first] : 0.0);
  const Complex p = std::conj(c) / (std::abs(c) * std::sqrt(norm));
  for (int i = 0; i < n; ++i) {
    const Complex z = Complex(re[i], im ? (*im)[i] : 0.0) * p;
    re[i] = z.real();
    if (im) (*im)[i] = z.imag();
  }
}

EigenSettings settings(int nev, Which which) {
  EigenSettings s;
  s.nev = nev;
  s.which = which;
  s.tol = 1e-13;
  s.left = true;
  return s;
}

// Checks a result against dense_eigen of the whole matrix a (the operator the solver acted on).
void check_against_dense(const Comm& comm, const Partition& rows, const Matrix& a, const EigenResult& r,
                         const EigenSettings& s, const std::string& what) {
  const int n = static_cast<int>(rows.n_global);
  DenseEigen e = dense_eigen(n, a.data(), true);
  // dense_eigen sorts by modulus; largest-real: the reference order by real part (pairs kept together).
  std::vector<int> order;
  for (int k = 0; k < n; ++k) {
    order.push_back(k);
    if (e.im[k] != 0) ++k;
  }
  if (s.which == Which::largest_real)
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      if (e.re[x] != e.re[y]) return e.re[x] > e.re[y];
      return std::hypot(e.re[x], e.im[x]) > std::hypot(e.re[y], e.im[y]);
    });
  std::vector<int> rowof;  // reference row of each result position
  for (int k : order) {
    rowof.push_back(k);
    if (e.im[k] != 0) rowof.push_back(k + 1);
  }
  ASSERT_EQ(r.nev, s.nev) << what;
  ASSERT_EQ(r.converged, s.nev) << what << ": separated top, all wanted pairs converge";
  for (int k = 0; k < r.converged; ++k) {
    const int j = rowof[k];
    const double scale = std::hypot(e.re[j], e.im[j]);
    EXPECT_NEAR(r.re[k], e.re[j], 1e-10 * scale) << what << " k = " << k;
    EXPECT_NEAR(r.im[k], e.im[j], 1e-10 * scale) << what << " k = " << k;
    EXPECT_LT(r.residual[k], 1e-11) << what << " k = " << k;
  }
  // Right vectors: the reference's, in the same phase, to the accuracy the residuals allow.
  // A pair cut by nev keeps Re v of the whole pair's phase.
  for (int k = 0; k < r.converged; ++k) {
    const int j = rowof[k];
    const bool pair = e.im[j] > 0;
    std::vector<double> vre(&e.right[j * n], &e.right[(j + 1) * n]), vim;
    if (pair) vim.assign(&e.right[(j + 1) * n], &e.right[(j + 2) * n]);
    reference_phase(vre, pair ? &vim : nullptr);
    const std::vector<double> got = gathered(comm, rows, r.right, k);
    for (int i = 0; i < n; ++i) ASSERT_NEAR(got[i], vre[i], 1e-8) << what << " vector " << k << " entry " << i;
    if (pair && k + 1 < r.converged) {
      const std::vector<double> got_im = gathered(comm, rows, r.right, k + 1);
      for (int i = 0; i < n; ++i) ASSERT_NEAR(got_im[i], vim[i], 1e-8) << what << " Im vector " << k;
      ++k;
    }
  }
  // Left vectors: u^H A = lambda u^H, |u| = 1.
  for (int k = 0; k < r.converged; ++k) {
    const bool pair = r.im[k] > 0;
    if (pair && k + 1 == r.converged) break;  // half a pair: no left eigenvector to check
    const std::vector<double> ur = gathered(comm, rows, r.left, k);
    const std::vector<double> ui = pair ? gathered(comm, rows, r.left, k + 1) : std::vector<double>(n, 0.0);
    const Complex lambda(r.re[k], r.im[k]);
    double norm = 0, worst = 0;
    for (int i = 0; i < n; ++i) norm += ur[i] * ur[i] + ui[i] * ui[i];
    for (int j = 0; j < n; ++j) {
      Complex s_ = 0;  // (u^H A)_j = sum_i conj(u_i) a_ij
      for (int i = 0; i < n; ++i) s_ += std::conj(Complex(ur[i], ui[i])) * a[i * n + j];
      worst = std::max(worst, std::abs(s_ - lambda * std::conj(Complex(ur[j], ui[j]))));
    }
    EXPECT_NEAR(norm, 1.0, 1e-12) << what << " left " << k;
    EXPECT_LT(r.left_residual[k], 1e-11) << what << " left " << k;
    EXPECT_LT(worst, 1e-9 * std::abs(lambda)) << what << " left " << k;
    if (pair) ++k;
  }
  // Gap of the listed order (doc/science.md section 7.4) from the reference values.
  const int next = e.im[rowof[0]] != 0 ? 2 : 1;
  const double g = 1 - std::hypot(e.re[rowof[next]], e.im[rowof[next]]) / std::hypot(e.re[rowof[0]], e.im[rowof[0]]);
  EXPECT_NEAR(r.gap, g, 1e-10) << what;
  EXPECT_EQ(r.complex_leading, e.im[rowof[0]] != 0) << what;
}

// The same matrix on every rank, its row block here.
// nev: the wanted pairs stay separated from the rest (bulk radius 0.5) in modulus and in real part, with
// and without the residual (1 + lambda).
struct Case {
  int n;
  std::vector<Complex> top;
  std::uint64_t seed;
  int nev;
};

const Case real_top{60, {3.0, -2.5, 2.0, {1.6, 0.7}, 1.2}, 5, 5};
const Case complex_top{48, {{2.4, 1.3}, -1.9, 1.5, {0.2, 1.1}}, 6, 3};

}  // namespace

TEST(DistributedLayerMatrix, RowsEqualLayerMatrix) {
  const Comm comm;
  // D = d with three heads; D != d; fewer rows than ranks (a rank without rows at 3 ranks).
  const int shapes[][3] = {{24, 3, 8}, {20, 2, 7}, {2, 2, 1}, {31, 4, 5}};
  for (const auto& [d, heads, head_dim] : shapes) {
    MemorySource source({random_layer(d, heads, head_dim, 1), random_layer(d, heads, head_dim, 2)});
    const Partition rows(d, comm.size());
    for (std::int64_t t = 0; t < source.layers(); ++t) {
      const Matrix f = layer_matrix(source.layer(t));
      const std::vector<double> mine = distributed_layer_rows(comm.get(), source, t);
      const std::vector<double> want = local_rows(f, d, rows, comm.rank());
      ASSERT_EQ(mine.size(), want.size());
      double scale = 0;
      for (double x : f) scale = std::max(scale, std::abs(x));
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(mine[i], want[i], 1e-13 * scale) << "d = " << d << " t = " << t << " entry " << i;
    }
  }
}

TEST(DistributedLayerMatrix, OperatorAppliesFAndItsTranspose) {
  const Comm comm;
  const int shapes[][3] = {{24, 3, 8}, {20, 2, 7}, {2, 2, 1}};
  for (const auto& [d, heads, head_dim] : shapes) {
    MemorySource source({random_layer(d, heads, head_dim, 3)});
    const Matrix f = layer_matrix(source.layer(0));
    const std::vector<double> x = gaussian(9, 0, d, 1);
    for (bool residual : {false, true}) {
      const LayerOperator op(comm.get(), source, 0, residual);
      const Partition& rows = op.rows();
      const std::int64_t begin = rows.begin(comm.rank()), n = rows.count(comm.rank());
      std::vector<double> y(n + 1), yt(n + 1);
      op.apply(x.data() + begin, y.data());
      op.apply_transpose(x.data() + begin, yt.data());
      for (std::int64_t i = 0; i < n; ++i) {
        double want = residual ? x[begin + i] : 0.0, want_t = want, scale = 1;
        for (int j = 0; j < d; ++j) {
          want += f[(begin + i) * d + j] * x[j];
          want_t += f[j * d + begin + i] * x[j];
          scale += std::abs(f[(begin + i) * d + j] * x[j]) + std::abs(f[j * d + begin + i] * x[j]);
        }
        EXPECT_NEAR(y[i], want, 1e-13 * scale) << "d = " << d << " row " << begin + i;
        EXPECT_NEAR(yt[i], want_t, 1e-13 * scale) << "d = " << d << " row " << begin + i << " (transpose)";
      }
    }
  }
}

TEST(SpectralGap, SpecFormula) {
  // Real leading: 1 - |l2| / |l1|; complex leading pair: 1 - |l3| / |l1|; too short: NaN.
  EXPECT_DOUBLE_EQ(spectral_gap({-4, 3, 1}, {0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(spectral_gap({3, 3, 4}, {4, -4, 0}), 1 - 4.0 / 5.0);
  EXPECT_TRUE(std::isnan(spectral_gap({3, 3}, {4, -4})));
  EXPECT_TRUE(std::isnan(spectral_gap({3}, {0})));
  EXPECT_TRUE(std::isnan(spectral_gap({}, {})));
}

TEST(Eigensolver, KrylovSchurOnDenseMatrixEqualsLapack) {
  const Comm comm;
  for (const Case* c : {&real_top, &complex_top})
    for (Which which : {Which::largest_magnitude, Which::largest_real})
      for (bool residual : {false, true}) {
        const Matrix a = known_matrix(c->n, c->top, c->seed);
        const Partition rows(c->n, comm.size());
        EigenSettings s = settings(c->nev, which);
        s.residual = residual;
        const EigenResult r = eigen_dense(comm.get(), rows, local_rows(a, c->n, rows, comm.rank()), s);
        Matrix acting = a;  // the residual solves I + F
        if (residual)
          for (int i = 0; i < c->n; ++i) acting[i * c->n + i] += 1;
        EXPECT_EQ(r.method, "krylovschur");
        check_against_dense(comm, rows, acting, r, s,
                            "dense n = " + std::to_string(c->n) + (which == Which::largest_real ? " LR" : " LM") +
                                (residual ? " residual" : ""));
      }
}

TEST(Eigensolver, KrylovSchurOnShellOperatorEqualsLapack) {
  const Comm comm;
  for (const Case* c : {&real_top, &complex_top})
    for (Which which : {Which::largest_magnitude, Which::largest_real})
      for (bool residual : {false, true}) {
        // O = A Q^T, V = Q (Q orthogonal, dense): F = O V = A up to round-off, with three heads.
        const int n = c->n;
        const Matrix a = known_matrix(n, c->top, c->seed);
        Matrix q(n * n, 0.0);
        for (int i = 0; i < n; ++i) q[i * n + i] = 1;
        for (const auto& u : reflectors(n, c->seed + 100)) reflect(q, n, u, true);
        LayerWeights w;
        w.d = n, w.heads = 3, w.head_dim = n / 3;
        w.value = q;
        w.output.assign(n * n, 0.0);
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j)
            for (int k = 0; k < n; ++k) w.output[i * n + j] += a[i * n + k] * q[j * n + k];
        MemorySource source({w});
        const LayerOperator op(comm.get(), source, 0, residual);
        EigenSettings s = settings(c->nev, which);
        s.residual = residual;
        const EigenResult r = eigen_operator(comm.get(), op, s);
        Matrix acting = layer_matrix(w);
        if (residual)
          for (int i = 0; i < n; ++i) acting[i * n + i] += 1;
        check_against_dense(comm, op.rows(), acting, r, s,
                            "shell n = " + std::to_string(n) + (which == Which::largest_real ? " LR" : " LM") +
                                (residual ? " residual" : ""));
      }
}

TEST(Eigensolver, LapackOnGatheredMatrixEqualsDenseEigen) {
  const Comm comm;
  for (const Case* c : {&real_top, &complex_top})
    for (Which which : {Which::largest_magnitude, Which::largest_real}) {
      const Matrix a = known_matrix(c->n, c->top, c->seed);
      const Partition rows(c->n, comm.size());
      EigenSettings s = settings(6, which);
      const EigenResult r = eigen_lapack(comm.get(), rows, local_rows(a, c->n, rows, comm.rank()), s);
      EXPECT_EQ(r.method, "lapack");
      check_against_dense(comm, rows, a, r, s, "lapack n = " + std::to_string(c->n));
    }
}

TEST(Eigensolver, KnownEigenvaluesRecovered) {
  // The prescribed top of Q B Q^T, from both solvers, to 1e-10 relative.
  const Comm comm;
  const Matrix a = known_matrix(complex_top.n, complex_top.top, complex_top.seed);
  const Partition rows(complex_top.n, comm.size());
  const std::vector<double> local = local_rows(a, complex_top.n, rows, comm.rank());
  const Complex want[] = {{2.4, 1.3}, {2.4, -1.3}, -1.9, 1.5, {0.2, 1.1}, {0.2, -1.1}};
  for (const EigenResult& r : {eigen_dense(comm.get(), rows, local, settings(6, Which::largest_magnitude)),
                               eigen_lapack(comm.get(), rows, local, settings(6, Which::largest_magnitude))}) {
    ASSERT_EQ(r.converged, 6);
    for (int k = 0; k < 6; ++k) {
      EXPECT_NEAR(r.re[k], want[k].real(), 1e-10 * std::abs(want[k])) << r.method << " " << k;
      EXPECT_NEAR(r.im[k], want[k].imag(), 1e-10 * std::abs(want[k])) << r.method << " " << k;
    }
    EXPECT_NEAR(r.gap, 1 - 1.9 / std::abs(want[0]), 1e-10);
  }
}

TEST(Eigensolver, ComplexLeadingPairGivesItsRealPlane) {
  const Comm comm;
  const int n = complex_top.n;
  const Matrix a = known_matrix(n, complex_top.top, complex_top.seed);
  const Partition rows(n, comm.size());
  const EigenResult r = eigen_dense(comm.get(), rows, local_rows(a, n, rows, comm.rank()),
                                    settings(3, Which::largest_magnitude));
  ASSERT_TRUE(r.complex_leading);
  ASSERT_EQ(r.plane.size(), 2 * static_cast<std::size_t>(rows.count(comm.rank())));
  const std::vector<double> q1 = gathered(comm, rows, r.plane, 0), q2 = gathered(comm, rows, r.plane, 1);
  // Reference projector onto span(Re v1, Im v1) of dense_eigen (any basis: P = A (A^T A)^{-1} A^T).
  const DenseEigen e = dense_eigen(n, a.data());
  const double* x = &e.right[0];
  const double* y = &e.right[n];
  double xx = 0, xy = 0, yy = 0, d1 = 0, d2 = 0, d12 = 0;
  for (int i = 0; i < n; ++i) xx += x[i] * x[i], xy += x[i] * y[i], yy += y[i] * y[i];
  for (int i = 0; i < n; ++i) d1 += q1[i] * q1[i], d2 += q2[i] * q2[i], d12 += q1[i] * q2[i];
  EXPECT_NEAR(d1, 1, 1e-13);
  EXPECT_NEAR(d2, 1, 1e-13);
  EXPECT_NEAR(d12, 0, 1e-13);
  const double det = xx * yy - xy * xy;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double want = (x[i] * (yy * x[j] - xy * y[j]) + y[i] * (xx * y[j] - xy * x[j])) / det;
      ASSERT_NEAR(q1[i] * q1[j] + q2[i] * q2[j], want, 1e-9) << i << ", " << j;
    }
}

TEST(Eigensolver, NevSplittingAPairKeepsItsRealPartAndSaysSo) {
  // complex_top: the pair 0.2 +- 1.1 i sits at 4, 5; nev = 5 cuts it.
  const Comm comm;
  const Matrix a = known_matrix(complex_top.n, complex_top.top, complex_top.seed);
  const Partition rows(complex_top.n, comm.size());
  const std::vector<double> local = local_rows(a, complex_top.n, rows, comm.rank());
  for (const EigenResult& r : {eigen_dense(comm.get(), rows, local, settings(5, Which::largest_magnitude)),
                               eigen_lapack(comm.get(), rows, local, settings(5, Which::largest_magnitude))}) {
    ASSERT_EQ(r.converged, 5) << r.method;
    EXPECT_NEAR(r.re[4], 0.2, 1e-10) << r.method;
    EXPECT_NEAR(r.im[4], 1.1, 1e-10) << r.method;
    EXPECT_EQ(r.right.size(), 5 * static_cast<std::size_t>(rows.count(comm.rank())));
  }
}

TEST(Eigensolver, SyntheticKindsGiveTheirPrescribedEigenvalues) {
  // Each kind's leading eigenvalues (outliers well above the bulk) from its distributed F (dense and shell
  // Krylov-Schur, LAPACK), to 1e-10 relative; layer-varying, so layer 1 differs from layer 0.
  const Comm comm;
  for (const std::string kind : {"dominant", "degenerate", "complex", "symmetric"}) {
    SyntheticSpec spec;
    spec.kind = kind;
    spec.d = 90;
    spec.heads = 3;
    spec.layers = 2;
    spec.shared = false;
    spec.outliers = 6;
    spec.lambda1 = kind == "dominant" ? -1.3 : 1.3;
    spec.gap = 0.25;
    spec.nonnormality = 0.2;
    const SyntheticWeights source(spec);
    const int nev = 4;
    for (std::int64_t t = 0; t < 2; ++t) {
      const auto want = source.eigenvalues(t);
      const Partition rows(spec.d, comm.size());
      const std::vector<double> f = distributed_layer_rows(comm.get(), source, t);
      const LayerOperator op(comm.get(), source, t, false);
      EigenSettings s = settings(nev, Which::largest_magnitude);
      s.left = false;
      for (const EigenResult& r : {eigen_dense(comm.get(), rows, f, s), eigen_operator(comm.get(), op, s),
                                   eigen_lapack(comm.get(), rows, f, s)}) {
        ASSERT_EQ(r.converged, nev) << kind << " " << r.method;
        for (int k = 0; k < nev; ++k) {
          EXPECT_NEAR(r.re[k], want[k].real(), 1e-10 * std::abs(want[k])) << kind << " " << r.method << " " << k;
          EXPECT_NEAR(r.im[k], want[k].imag(), 1e-10 * std::abs(want[k])) << kind << " " << r.method << " " << k;
        }
        // The gap of doc/science.md section 7.4 from the prescribed values: 1 - |l2|/|l1|, or 1 - |l3|/|l1|
        // for the complex pair.
        const double g = 1 - std::abs(want[kind == "complex" ? 2 : 1]) / std::abs(want[0]);
        EXPECT_NEAR(r.gap, g, 1e-10) << kind << " " << r.method;
        EXPECT_EQ(r.complex_leading, kind == "complex") << kind;
      }
    }
  }
}
