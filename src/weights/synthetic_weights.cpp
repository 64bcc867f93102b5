#include "tokdyn/weights/synthetic_weights.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

namespace {

constexpr int band = 2;                     // width of T's random strictly upper band
constexpr std::uint64_t permutation_index = 1 << 20;  // stream index of the permutation (above reflector ids)

// r <- r (I - 2 w w^T) = r - 2 (r . w) w^T for each reflector, in the given order.
void reflect(std::vector<double>& r, const std::vector<std::vector<double>>& w, bool forward) {
  const int p = static_cast<int>(w.size());
  for (int s = 0; s < p; ++s) {
    const std::vector<double>& v = w[forward ? s : p - 1 - s];
    double dot = 0;
    for (std::size_t i = 0; i < r.size(); ++i) dot += r[i] * v[i];
    for (std::size_t i = 0; i < r.size(); ++i) r[i] -= 2 * dot * v[i];
  }
}

}  // namespace

struct SyntheticWeights::Layer {
  std::vector<std::complex<double>> eigenvalues;  // sorted by decreasing modulus
  // T [d, d] quasi-upper-triangular, by rows: entries (column, value).
  std::vector<std::vector<std::pair<int, double>>> t_rows;
  std::vector<std::vector<double>> u, w;  // Householder unit vectors of U (eigenbasis) and W (= V) [p][d]
  std::vector<int> perm;                  // T index alpha sits at coordinate perm[alpha]
  std::int64_t key = -1;
};

const KeyTable<SyntheticSpec>& SyntheticWeights::keys() {
  using S = SyntheticSpec;
  static const KeyTable<S> table =
      KeyTable<S>("synthetic")
          .choice("kind", &S::kind, "dominant", {"dominant", "degenerate", "complex", "symmetric", "random"},
                  "prescribed spectrum of synthetic layers: strictly dominant real lambda_1, near-degenerate "
                  "lambda_1 ~ lambda_2, complex dominant pair, symmetric, or random Gaussian O and V")
          .integer("d", &S::d, 64, "model width d", 2, 1 << 20)
          .integer("heads", &S::heads, 1, "heads H (divides d; head size d/H)", 1, 1 << 16)
          .integer("layers", &S::layers, 12, "layers of the synthetic model", 1)
          .boolean("shared", &S::shared, true,
                   "one set of weights for every layer (ALBERT-like); false: drawn per layer")
          .real("lambda1", &S::lambda1, 1.0, "leading eigenvalue lambda_1 (modulus of the pair for kind = complex)")
          .real("gap", &S::gap, 0.3, "ratio step between outliers: lambda_{k+1} = lambda_k (1 - gap)", 0.0, 1.0, true)
          .real("angle", &S::angle, 0.5, "argument of the complex dominant pair lambda_1 e^{+-i angle} (radians)",
                0.0, std::numbers::pi, true)
          .real("degeneracy", &S::degeneracy, 1e-3, "kind = degenerate: lambda_2 = lambda_1 (1 - degeneracy)", 0.0,
                1.0, true)
          .integer("outliers", &S::outliers, 3, "leading eigenvalues placed exactly (a complex pair counts 2)", 2)
          .real("bulk", &S::bulk, 0.8, "radius of the bulk disk relative to the smallest outlier's modulus", 0.0,
                1.0, true)
          .real("nonnormality", &S::nonnormality, 0.1,
                "scale of T's strictly upper band relative to |lambda_1| (keep it small at large d: the bulk "
                "eigenvalues of a non-normal T are ill-conditioned)",
                0.0)
          .integer("reflectors", &S::reflectors, 8, "Householder reflectors in each orthogonal factor", 1, 64)
          .integer("seed", &S::seed, 1, "seed of the synthetic weights (independent of run.seed)", 0)
          .real("qk_scale", &S::qk_scale, 1.0, "Q, K entries ~ N(0, qk_scale^2 / d)", 0.0);
  return table;
}

SyntheticWeights::SyntheticWeights(const SyntheticSpec& s) : spec_(s) {
  if (s.d < 2) throw InputError("synthetic.d = " + std::to_string(s.d) + " must be at least 2");
  if (s.heads < 1 || s.d % s.heads != 0)
    throw InputError("synthetic.heads = " + std::to_string(s.heads) + " does not divide synthetic.d = " +
                     std::to_string(s.d));
  if (s.kind != "random") {
    if (s.outliers < 2 || s.outliers > s.d)
      throw InputError("synthetic.outliers = " + std::to_string(s.outliers) + " must lie in [2, synthetic.d = " +
                       std::to_string(s.d) + "]");
    if (s.lambda1 == 0) throw InputError("synthetic.lambda1 must not be 0");
  }
  if (s.kind != "dominant" && s.kind != "degenerate" && s.kind != "complex" && s.kind != "symmetric" &&
      s.kind != "random")
    throw InputError("synthetic.kind '" + s.kind + "' is not one of dominant, degenerate, complex, symmetric, random");
}

double SyntheticWeights::score_scale() const { return 1 / std::sqrt(static_cast<double>(head_dim())); }

std::shared_ptr<const SyntheticWeights::Layer> SyntheticWeights::layer_data(std::int64_t t) const {
  if (t < 0 || t >= spec_.layers)
    throw InputError("layer " + std::to_string(t) + " outside the synthetic weights' " + std::to_string(spec_.layers) +
                     " layers");
  const std::int64_t key = spec_.shared ? 0 : t;
  // The last layer asked for is kept: a rank asks for its rows of one layer several times in a row.
  if (cache_ && cache_->key == key) return cache_;

  auto L = std::make_shared<Layer>();
  L->key = key;
  const int d = spec_.d;
  const std::uint64_t step = static_cast<std::uint64_t>(key);
  const RandomStream spectrum(spec_.seed, Purpose::synthetic_spectrum);
  const RandomStream orthogonal(spec_.seed, Purpose::synthetic_orthogonal);

  // Diagonal blocks of T: outliers first, then the bulk. A block is (re, im >= 0); im > 0 takes two slots.
  std::vector<std::pair<double, double>> blocks;
  const double l1 = spec_.lambda1, g = spec_.gap;
  const bool symmetric = spec_.kind == "symmetric";
  int used = 0;
  if (spec_.kind == "complex") {
    blocks.push_back({l1 * std::cos(spec_.angle), std::abs(l1) * std::sin(spec_.angle)});
    used = 2;
    for (int k = 3; k <= spec_.outliers; ++k, ++used) blocks.push_back({l1 * std::pow(1 - g, k - 2), 0});
  } else {
    blocks.push_back({l1, 0});
    used = 1;
    double next = spec_.kind == "degenerate" ? l1 * (1 - spec_.degeneracy) : l1 * (1 - g);
    for (int k = 2; k <= spec_.outliers; ++k, ++used, next *= 1 - g) blocks.push_back({next, 0});
  }
  double smallest = std::abs(l1);
  for (const auto& b : blocks) smallest = std::min(smallest, std::hypot(b.first, b.second));
  const double radius = spec_.bulk * smallest;
  for (int slot = used; slot < d;) {
    const auto u = spectrum.uniform4(step, static_cast<std::uint64_t>(slot), 0);
    if (symmetric || slot == d - 1) {
      blocks.push_back({radius * (2 * u[0] - 1), 0});
      ++slot;
    } else {
      const double r = radius * std::sqrt(u[0]), phi = std::numbers::pi * u[1];
      blocks.push_back({r * std::cos(phi), r * std::sin(phi)});
      slot += 2;
    }
  }

  // T: the blocks on the diagonal, a random band above it (outside the 2 x 2 blocks).
  L->t_rows.assign(d, {});
  std::vector<bool> pair_start(d, false);
  int alpha = 0;
  for (const auto& [re, im] : blocks) {
    if (im > 0) {
      // [[a, b], [-b, a]] has eigenvalues a +- i b.
      L->t_rows[alpha].push_back({alpha, re});
      L->t_rows[alpha].push_back({alpha + 1, im});
      L->t_rows[alpha + 1].push_back({alpha, -im});
      L->t_rows[alpha + 1].push_back({alpha + 1, re});
      pair_start[alpha] = true;
      L->eigenvalues.push_back({re, im});
      L->eigenvalues.push_back({re, -im});
      alpha += 2;
    } else {
      L->t_rows[alpha].push_back({alpha, re});
      L->eigenvalues.push_back({re, 0});
      alpha += 1;
    }
  }
  if (!symmetric && spec_.nonnormality > 0) {
    const double sd = spec_.nonnormality * std::abs(l1) / std::sqrt(static_cast<double>(band));
    for (int a = 0; a < d; ++a) {
      double z[band];
      spectrum.normals(step, static_cast<std::uint64_t>(d + a), z, band);
      for (int o = 1; o <= band && a + o < d; ++o) {
        if (o == 1 && pair_start[a]) continue;  // inside a 2 x 2 block
        L->t_rows[a].push_back({a + o, sd * z[o - 1]});
      }
    }
  }
  std::stable_sort(L->eigenvalues.begin(), L->eigenvalues.end(), [](auto x, auto y) {
    if (std::abs(x) != std::abs(y)) return std::abs(x) > std::abs(y);
    if (x.real() != y.real()) return x.real() > y.real();
    return x.imag() > y.imag();
  });

  // Reflectors (unit Gaussian directions) and the permutation (Fisher-Yates from one stream).
  auto unit = [&](std::uint64_t index) {
    std::vector<double> v(d);
    orthogonal.normals(step, index, v.data(), d);
    double n = 0;
    for (double x : v) n += x * x;
    for (double& x : v) x /= std::sqrt(n);
    return v;
  };
  for (int k = 0; k < spec_.reflectors; ++k) {
    L->u.push_back(unit(static_cast<std::uint64_t>(k)));
    L->w.push_back(unit(static_cast<std::uint64_t>(spec_.reflectors + k)));
  }
  L->perm.resize(d);
  for (int i = 0; i < d; ++i) L->perm[i] = i;
  for (int j = d - 1; j > 0; --j) {
    const double u = orthogonal.uniform4(step, permutation_index, static_cast<std::uint64_t>(j / 4))[j % 4];
    const int pick = std::min(j, static_cast<int>(u * (j + 1)));
    std::swap(L->perm[j], L->perm[pick]);
  }
  cache_ = L;
  return L;
}

std::vector<std::complex<double>> SyntheticWeights::eigenvalues(std::int64_t t) const {
  if (spec_.kind == "random") return {};
  return layer_data(t)->eigenvalues;
}

std::vector<double> SyntheticWeights::matrix_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const {
  const int d = spec_.d;
  if (spec_.kind == "random") {
    // F = O V: only through the product.
    const std::vector<double> o = output_rows(t, begin, end), v = value_rows(t, 0, d);
    std::vector<double> f(static_cast<std::size_t>(end - begin) * d, 0.0);
    for (std::int64_t i = 0; i < end - begin; ++i)
      for (int k = 0; k < d; ++k)
        for (int j = 0; j < d; ++j) f[i * d + j] += o[i * d + k] * v[static_cast<std::size_t>(k) * d + j];
    return f;
  }
  const auto L = layer_data(t);
  std::vector<double> out(static_cast<std::size_t>(end - begin) * d), r(d), q(d), y(d);
  for (std::int64_t i = begin; i < end; ++i) {
    // Row i of F = U P T P^T U^T: r = e_i^T U, q = r P (T coordinates), y = q T, back through P^T U^T.
    std::fill(r.begin(), r.end(), 0.0);
    r[i] = 1;
    reflect(r, L->u, true);
    for (int a = 0; a < d; ++a) q[a] = r[L->perm[a]];
    std::fill(y.begin(), y.end(), 0.0);
    for (int a = 0; a < d; ++a)
      for (const auto& [b, value] : L->t_rows[a]) y[b] += q[a] * value;
    for (int b = 0; b < d; ++b) r[L->perm[b]] = y[b];
    reflect(r, L->u, false);  // (U s^T)^T: H_{p-1} first
    std::copy(r.begin(), r.end(), out.begin() + (i - begin) * d);
  }
  return out;
}

std::vector<double> SyntheticWeights::gaussian_rows(std::int64_t t, int which, std::int64_t begin, std::int64_t end,
                                                    double sd) const {
  if (t < 0 || t >= spec_.layers)
    throw InputError("layer " + std::to_string(t) + " outside the synthetic weights' " + std::to_string(spec_.layers) +
                     " layers");
  const int d = spec_.d;
  const std::uint64_t key = static_cast<std::uint64_t>(spec_.shared ? 0 : t);
  const RandomStream stream(spec_.seed, Purpose::synthetic_weights);
  std::vector<double> out(static_cast<std::size_t>(end - begin) * d);
  for (std::int64_t i = begin; i < end; ++i) {
    double* row = out.data() + (i - begin) * d;
    stream.normals(4 * key + static_cast<std::uint64_t>(which), static_cast<std::uint64_t>(i), row, d);
    for (int j = 0; j < d; ++j) row[j] *= sd;
  }
  return out;
}

std::vector<double> SyntheticWeights::output_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const {
  const int d = spec_.d;
  if (spec_.kind == "random") return gaussian_rows(t, 2, begin, end, 1 / std::sqrt(static_cast<double>(d)));
  // O = F W^T: row_i(O) = (W row_i(F)^T)^T, W = G_0 ... G_{p-1}, so G_{p-1} acts first.
  std::vector<double> f = matrix_rows(t, begin, end), r(d);
  const auto L = layer_data(t);
  for (std::int64_t i = 0; i < end - begin; ++i) {
    std::copy(f.begin() + i * d, f.begin() + (i + 1) * d, r.begin());
    reflect(r, L->w, false);
    std::copy(r.begin(), r.end(), f.begin() + i * d);
  }
  return f;
}

std::vector<double> SyntheticWeights::value_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const {
  const int d = spec_.d;
  if (spec_.kind == "random") return gaussian_rows(t, 3, begin, end, 1 / std::sqrt(static_cast<double>(d)));
  const auto L = layer_data(t);
  std::vector<double> out(static_cast<std::size_t>(end - begin) * d), r(d);
  for (std::int64_t i = begin; i < end; ++i) {
    std::fill(r.begin(), r.end(), 0.0);
    r[i] = 1;
    reflect(r, L->w, true);  // e_i^T W
    std::copy(r.begin(), r.end(), out.begin() + (i - begin) * d);
  }
  return out;
}

LayerWeights SyntheticWeights::layer(std::int64_t t) const {
  LayerWeights w;
  w.d = spec_.d;
  w.heads = spec_.heads;
  w.head_dim = head_dim();
  w.score_scale = score_scale();
  const double sd = spec_.qk_scale / std::sqrt(static_cast<double>(spec_.d));
  w.query = gaussian_rows(t, 0, 0, spec_.d, sd);
  w.key = gaussian_rows(t, 1, 0, spec_.d, sd);
  w.value = value_rows(t, 0, spec_.d);
  w.output = output_rows(t, 0, spec_.d);
  return w;
}

std::vector<double> SyntheticWeights::embedding(const std::vector<std::int64_t>&) const {
  throw InputError("synthetic weights have no token embedding (use power.tokens = random or file)");
}

std::string SyntheticWeights::describe() const {
  std::ostringstream s;
  s << "synthetic " << spec_.kind << " d = " << spec_.d << ", " << spec_.heads << " head" << (spec_.heads > 1 ? "s" : "")
    << ", " << spec_.layers << " layers (" << (spec_.shared ? "shared" : "layer-varying") << ")";
  if (spec_.kind != "random") {
    // Of F itself; a residual layer applies I + F, whose eigenvalues the power run prints.
    s << ", lambda_1(F) = " << spec_.lambda1 << ", gap(F) = " << spec_.gap;
    if (spec_.kind == "complex") s << ", angle = " << spec_.angle;
    if (spec_.kind == "degenerate") s << ", degeneracy = " << spec_.degeneracy;
  }
  s << ", seed " << spec_.seed;
  return s.str();
}


}  // namespace tokdyn
