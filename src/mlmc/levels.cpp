#include "tokdyn/mlmc/levels.hpp"

#include <cmath>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/numerics/lapack.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/dynamics/transformer.hpp"
#include "tokdyn/noise/activation.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

CoupledLevels::CoupledLevels(const LevelSetup& setup)
    : setup_(setup), observable_(token_observables().make(setup.observable, setup.beta)) {
  sde_schemes().require(setup.scheme);
  if (setup.coarsest < 1) throw InputError("mlmc: the coarsest depth L0 must be at least 1");
  if (setup.mlp.width < 0) throw InputError("mlmc: the MLP width must be at least 0 (0: the infinite-width field)");
  if (setup.mlp.width > 0) activation(setup.mlp.activation);  // an unknown name fails here
  if (!setup.tokens.empty() && setup.tokens.size() != static_cast<std::size_t>(setup.n) * setup.d)
    throw InputError("mlmc: the initial tokens hold " + std::to_string(setup.tokens.size()) + " values, not N d = " +
                     std::to_string(setup.n * setup.d));
}

std::uint64_t CoupledLevels::sample_key(const LevelIndex& i, std::int64_t index) const {
  const std::uint64_t code = static_cast<std::uint64_t>(i.depth) + 64 * static_cast<std::uint64_t>(i.tokens);
  return RandomStream(setup_.seed, Purpose::mlmc_sample).bits(code, static_cast<std::uint64_t>(index), 0)[0];
}

double CoupledLevels::step_work(std::int64_t n) const {
  const double modes =
      !setup_.noise ? 0.0 : static_cast<double>(setup_.mlp.width > 0 ? setup_.mlp.width : setup_.field.features);
  return static_cast<double>(n) * ((setup_.factor != 0 ? static_cast<double>(n) : 0.0) + modes + 1);
}

double CoupledLevels::cost(const LevelIndex& i, LevelDirections along) const {
  const bool depth = along.depth && i.depth > 0, halves = along.tokens && i.tokens > 0;
  const double unit = step_work(setup_.n);
  auto one = [&](int a, std::int64_t n) { return static_cast<double>(layers(a)) * step_work(n) / unit; };
  double c = one(i.depth, tokens(i.tokens));
  if (halves) c += 2 * one(i.depth, tokens(i.tokens) / 2);
  if (depth) c += one(i.depth - 1, tokens(i.tokens)) + (halves ? 2 * one(i.depth - 1, tokens(i.tokens) / 2) : 0.0);
  return c;
}

// One path of `steps` steps on the noise of `key`, from the n tokens x0: phi(X_T).
double CoupledLevels::path(std::int64_t steps, std::uint64_t key, const double* x0, std::int64_t n,
                           WidthDraw draw) const {
  const LevelSetup& s = setup_;
  const bool width = s.mlp.width > 0 && s.noise;
  if (width && draw != WidthDraw::weights) return covariance_path(steps, key, x0, n, draw == WidthDraw::merged);
  std::unique_ptr<Attention> attention = replica_attention(s.attention_style, s.weights, n, s.tile, s.factor);
  std::unique_ptr<Dynamics> dynamics;
  if (width) {
    TransformerParams tp;
    tp.n = n;
    tp.d = s.d;
    tp.layers = steps;
    tp.horizon = s.horizon;
    tp.factor = s.factor;
    MlpParams mp = s.mlp;
    mp.seed = key;  // the sample's MLPs
    dynamics = std::make_unique<Transformer>(tp, n, std::move(attention), RandomMlp(mp, s.d));
  } else {
    SdeSetup setup;
    setup.params.n = n;
    setup.params.d = s.d;
    setup.params.steps = steps;
    setup.params.horizon = s.horizon;
    setup.params.factor = s.factor;
    setup.params.project = true;
    setup.params.noise = s.noise;
    setup.n_local = n;
    setup.attention = std::move(attention);
    FieldParams fp = s.field;
    fp.seed = key;  // the sample's random features
    setup.field = field_styles().make(s.field_name, fp);
    setup.seed = key;  // and its Brownian path
    dynamics = sde_schemes().make(s.scheme, setup);
  }
  std::vector<double> x(x0, x0 + n * s.d);
  for (std::int64_t k = 0; k < steps; ++k) dynamics->step(k, x.data());
  return (*observable_)(x.data(), n, s.d);
}

// The width-m transformer drawn through its fields' covariances (levels.hpp). Layer k draws what RandomMlp draws for
// layer k + 1 (U, b_U, b_W: the same streams), and Z; merged, it is built from layers 2k + 1 and 2k + 2.
double CoupledLevels::covariance_path(std::int64_t steps, std::uint64_t key, const double* x0, std::int64_t n,
                                      bool merged) const {
  const LevelSetup& s = setup_;
  const int d = s.d, m = static_cast<int>(s.mlp.width), nn = static_cast<int>(n);
  const double dt = s.horizon / static_cast<double>(steps), in = 1 / std::sqrt(static_cast<double>(d));
  const Activation& act = activation(s.mlp.activation);
  const RandomStream su(key, Purpose::mlp_u), sbu(key, Purpose::mlp_bias_u), sbw(key, Purpose::mlp_bias_w),
      sz(key, Purpose::field_z);
  const std::size_t nd = static_cast<std::size_t>(n) * d;
  std::unique_ptr<Attention> attention = replica_attention(s.attention_style, s.weights, n, s.tile, s.factor);
  std::vector<double> x(x0, x0 + nd), buffer(nd), u(static_cast<std::size_t>(m) * d), bias_u(m), z(nd), bias_w(d),
      drawn(std::max<std::size_t>(nd, d)), hidden(static_cast<std::size_t>(n) * m),
      sigma(static_cast<std::size_t>(n) * n), root(sigma.size());
  for (std::int64_t k = 0; k < steps; ++k) {
    if (attention) {
      attention->apply(x.data(), buffer.data());
      for (std::size_t e = 0; e < nd; ++e) x[e] += s.factor * dt * buffer[e];
      normalize_rows(x.data(), n, d);
    }
    // The layer's draws: hidden row r of fine layer first + (r >= m/2) when merged, of layer k + 1 otherwise.
    const std::uint64_t first = merged ? 2 * static_cast<std::uint64_t>(k) + 1 : static_cast<std::uint64_t>(k) + 1;
    for (int r = 0; r < m; ++r) {
      const std::uint64_t layer = first + (merged && r >= m / 2 ? 1 : 0);
      su.normals(layer, r, u.data() + static_cast<std::size_t>(r) * d, d);
      bias_u[r] = s.mlp.sigma_u * sbu.normal4(layer, r, 0)[0];
    }
    std::fill(z.begin(), z.end(), 0.0);
    std::fill(bias_w.begin(), bias_w.end(), 0.0);
    const int parts = merged ? 2 : 1;
    const double scale = merged ? 1 / std::sqrt(2.0) : 1.0;
    for (int p = 0; p < parts; ++p) {
      for (std::int64_t i = 0; i < n; ++i) sz.normals(first + p, static_cast<std::uint64_t>(i), drawn.data() + i * d, d);
      for (std::size_t e = 0; e < nd; ++e) z[e] += scale * drawn[e];
      sbw.normals(first + p, 0, drawn.data(), d);
      for (int a = 0; a < d; ++a) bias_w[a] += scale * s.mlp.sigma_w * drawn[a];
    }
    // A = sigma(Y U^T / sqrt d + b_U) [n, m]; Sigma = A A^T / m [n, n]; x += sqrt(dt) (Sigma^{1/2} Z + b_W).
    gemm_nt(nn, m, d, in, x.data(), d, u.data(), d, 0.0, hidden.data(), m);
    for (std::int64_t i = 0; i < n; ++i) act.row(hidden.data() + static_cast<std::size_t>(i) * m, bias_u.data(), m);
    gemm_nt(nn, nn, m, 1.0 / m, hidden.data(), m, hidden.data(), m, 0.0, sigma.data(), nn);
    symmetric_sqrt(nn, sigma.data(), root.data());
    gemm_nn(nn, d, nn, 1.0, root.data(), nn, z.data(), d, 0.0, buffer.data(), d);
    for (std::size_t e = 0; e < nd; ++e) x[e] += std::sqrt(dt) * (buffer[e] + bias_w[e % d]);
    normalize_rows(x.data(), n, d);
  }
  return (*observable_)(x.data(), n, d);
}

double CoupledLevels::at(int a, std::int64_t n, bool halves, std::uint64_t key, const double* x0,
                         WidthDraw draw) const {
  if (!halves) return path(layers(a), key, x0, n, draw);
  const std::int64_t h = n / 2;
  return 0.5 * (path(layers(a), key, x0, h, draw) + path(layers(a), key, x0 + h * setup_.d, h, draw));
}

void CoupledLevels::sample(const LevelIndex& i, LevelDirections along, std::int64_t index, double& fine,
                           double& coarse) const {
  const LevelSetup& s = setup_;
  const std::uint64_t key = sample_key(i, index);
  const std::int64_t n = tokens(i.tokens);
  std::vector<double> x0 = s.tokens;
  if (x0.empty()) {
    x0.resize(static_cast<std::size_t>(n) * s.d);
    sample_uniform_sphere(key, 0, n, s.d, x0.data());
  } else if (i.tokens > 0) {
    throw InputError("mlmc: levels in the token count need fresh tokens for every sample (mlmc.fresh_tokens)");
  }
  const bool depth = along.depth && i.depth > 0, halves = along.tokens && i.tokens > 0;
  if (s.mlp.width > 0 && along.depth && along.tokens)
    throw InputError("mlmc: at a finite MLP width the levels take one direction, the depth or the token count");
  // At a finite width: the covariance draws where the depth has levels, the weights otherwise (levels.hpp).
  const WidthDraw own = along.depth ? WidthDraw::covariance : WidthDraw::weights;
  // coarse = P(a-1, b) + H(a, b-1) - H(a-1, b-1), each term where its direction applies (H: the halves' mean).
  fine = at(i.depth, n, false, key, x0.data(), own);
  coarse = 0.0;
  if (depth) coarse = at(i.depth - 1, n, false, key, x0.data(), WidthDraw::merged);
  if (halves) {
    const double h = at(i.depth, n, true, key, x0.data(), own);
    coarse = depth ? coarse + (h - at(i.depth - 1, n, true, key, x0.data(), WidthDraw::merged)) : h;
  }
}

}  // namespace tokdyn
