#include "tokdyn/mlmc/levels.hpp"

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

CoupledLevels::CoupledLevels(const LevelSetup& setup)
    : setup_(setup), observable_(token_observables().make(setup.observable, setup.beta)) {
  sde_schemes().require(setup.scheme);
  if (setup.coarsest < 1) throw InputError("mlmc: the coarsest depth L0 must be at least 1");
  if (!setup.tokens.empty() && setup.tokens.size() != static_cast<std::size_t>(setup.n) * setup.d)
    throw InputError("mlmc: the initial tokens hold " + std::to_string(setup.tokens.size()) + " values, not N d = " +
                     std::to_string(setup.n * setup.d));
}

std::uint64_t CoupledLevels::sample_key(const LevelIndex& i, std::int64_t index) const {
  const std::uint64_t code = static_cast<std::uint64_t>(i.depth) + 64 * static_cast<std::uint64_t>(i.tokens);
  return RandomStream(setup_.seed, Purpose::mlmc_sample).bits(code, static_cast<std::uint64_t>(index), 0)[0];
}

double CoupledLevels::step_work(std::int64_t n) const {
  const double modes = setup_.noise ? static_cast<double>(setup_.field.features) : 0.0;
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
double CoupledLevels::path(std::int64_t steps, std::uint64_t key, const double* x0, std::int64_t n) const {
  const LevelSetup& s = setup_;
  SdeSetup setup;
  setup.params.n = n;
  setup.params.d = s.d;
  setup.params.steps = steps;
  setup.params.horizon = s.horizon;
  setup.params.factor = s.factor;
  setup.params.project = true;
  setup.params.noise = s.noise;
  setup.n_local = n;
  setup.attention = replica_attention(s.attention_style, s.weights, n, s.tile, s.factor);
  FieldParams fp = s.field;
  fp.seed = key;  // the sample's random features
  setup.field = field_styles().make(s.field_name, fp);
  setup.seed = key;  // and its Brownian path
  const std::unique_ptr<SdeScheme> scheme = sde_schemes().make(s.scheme, setup);
  std::vector<double> x(x0, x0 + n * s.d);
  for (std::int64_t k = 0; k < steps; ++k) scheme->step(k, x.data());
  return (*observable_)(x.data(), n, s.d);
}

double CoupledLevels::at(int a, std::int64_t n, bool halves, std::uint64_t key, const double* x0) const {
  if (!halves) return path(layers(a), key, x0, n);
  const std::int64_t h = n / 2;
  return 0.5 * (path(layers(a), key, x0, h) + path(layers(a), key, x0 + h * setup_.d, h));
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
  // coarse = P(a-1, b) + H(a, b-1) - H(a-1, b-1), each term where its direction applies (H: the halves' mean).
  fine = at(i.depth, n, false, key, x0.data());
  coarse = 0.0;
  if (depth) coarse = at(i.depth - 1, n, false, key, x0.data());
  if (halves) {
    const double h = at(i.depth, n, true, key, x0.data());
    coarse = depth ? coarse + (h - at(i.depth - 1, n, true, key, x0.data())) : h;
  }
}

}  // namespace tokdyn
