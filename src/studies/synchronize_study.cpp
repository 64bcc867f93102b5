#include "tokdyn/studies/synchronize_study.hpp"

#include <cstdio>
#include <utility>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/diagnostics/fit.hpp"

namespace tokdyn {
namespace {

// What /synchronization holds (io/outputs.hpp): declared here, beside the code that writes it.
constexpr OutputDecl kSynchronizeOutputs[] = {
    {"synchronization/aligned_fraction", OutputType::real, "1", "replica",
     "Each replica's fraction of the N(N-1)/2 pairs i < j with cosine above synchronize.cluster_cosine after the last "
     "layer (pairs in one cluster)."},
    {"synchronization/antipodal_fraction", OutputType::real, "1", "replica",
     "Each replica's fraction of the N(N-1)/2 pairs i < j with cosine below minus synchronize.cluster_cosine after the "
     "last layer (pairs in antipodal clusters)."},
    {"synchronization/bound", OutputType::real, "1", "row",
     "The bound of Thm 1.4, exp(lambdabar' t) E[E_beta(0)], at each recorded time (lambdabar' the lambdabar_prime "
     "attribute)."},
    {"synchronization/decay_rate", OutputType::real, "1/model time", "estimate",
     "Least-squares slope of log E[E_beta(t)] against t over t >= synchronize.fit_start: value, then the low and high "
     "ends of its 95% bootstrap interval over replicas."},
    {"synchronization/energy", OutputType::real, "1", "replica, row",
     "Interaction energy E_beta = (1/(2N^2)) sum_ij (e^beta - e^{beta <x_i, x_j>}) of each replica's tokens at each "
     "recorded layer (exact, all pairs)."},
    {"synchronization/initial_energy", OutputType::real, "1", "replica",
     "E_beta(0) of each replica, the initial tokens' interaction energy."},
    {"synchronization/layer", OutputType::real, "layers", "row",
     "Recorded layers l (every diagnostics.every layers and the last, 0 the initial tokens), as real numbers."},
    {"synchronization/mean_energy", OutputType::real, "1", "row",
     "E[E_beta(t)], the mean over replicas of the interaction energy at each recorded layer."},
    {"synchronization/min_cosine", OutputType::real, "1", "replica",
     "Each replica's minimum pairwise cosine <x_i, x_j>, i != j, after the last layer."},
    {"synchronization/replicas", OutputType::real, "1", "replica",
     "Replica id of each replica (synchronize.first_replica + r), which keys its random streams."},
    {"synchronization/standard_error", OutputType::real, "1", "row",
     "Standard error of mean_energy over replicas, the sample standard deviation over sqrt(R)."},
    {"synchronization/time", OutputType::real, "model time t", "row",
     "Model time t = l T/L of each recorded layer."},
    {"synchronization@argmin_u", OutputType::real, "1", "",
     "Where F(u) of Thm 1.4 attains its infimum over [-1, 1) (grid of 4001 points, then golden-section search); 1 when "
     "the limit F(1-) = -lambdabar wins."},
    {"synchronization@beta", OutputType::real, "1", "",
     "Inverse temperature beta of the interaction energy E_beta and of F(u) (attention.beta)."},
    {"synchronization@cluster_cosine", OutputType::real, "1", "",
     "Threshold c of the cluster fractions (synchronize.cluster_cosine): a pair is in one cluster when its cosine is "
     "above c, in antipodal clusters when below -c."},
    {"synchronization@fit_start", OutputType::real, "model time t", "",
     "First time of the decay_rate fit (synchronize.fit_start): the recorded times t >= fit_start are fitted."},
    {"synchronization@kappa1", OutputType::real, "1/model time", "",
     "kappa(1) = E[sigma(V)^2] + sigma_W^2 of the MLP's covariance kernel: the variance of each coordinate of the "
     "field G at a point (doc/science.md section 2)."},
    {"synchronization@kappa_prime1", OutputType::real, "1/model time", "",
     "kappa'(1) = (1/d) E[sigma'(V)^2], the kernel's derivative at u = 1: the decorrelation between nearby points."},
    {"synchronization@lambda1", OutputType::real, "1/model time", "",
     "lambda_1 = ((d-3)/2) kappa'(1) - ((d-1)/2) kappa(1), the predicted slope of E log|X_t - Y_t| of two nearby "
     "tokens (Prop 1.5)."},
    {"synchronization@lambdabar", OutputType::real, "1/model time", "",
     "lambdabar = (d-1) kappa'(1) - (d-3) kappa(1), the predicted slope of log E|X_t - Y_t|^2 of two nearby tokens; "
     "Thm 1.4 assumes lambdabar < 0."},
    {"synchronization@lambdabar_prime", OutputType::real, "1/model time", "",
     "lambdabar' = -inf_{u in [-1, 1)} F(u), the rate of the bound exp(lambdabar' t) E[E_beta(0)] of Thm 1.4 (at least "
     "lambdabar), an upper bound on decay_rate."},
    {"synchronization@max_ratio_to_bound", OutputType::real, "1", "",
     "Maximum over the recorded times of mean_energy / bound: 1 when the bound holds at every time (the ratio is 1 at "
     "t = 0)."},
    {"synchronization@notes", OutputType::text, "", "",
     "Why Thm 1.4 does not apply to the deck, one sentence a line (lambdabar >= 0, an odd field, mlp.enabled = false, "
     "attention not softmax with Q^T K = beta I, V = I and factor >= 0); empty when it applies."},
    {"synchronization@odd_field", OutputType::integer, "1", "",
     "1 when the field is odd (an activation odd at three test points and sigma_U = sigma_W = 0): two antipodal "
     "clusters are expected instead of one; else 0."},
};
const DeclaredOutputs kSynchronizeDeclared("synchronize", kSynchronizeOutputs);

// The model, its attention (weights loaded) and MLP, and the replicas, from the deck.
SynchronizationSetup setup_from_deck(const Comm& comm, const Deck& deck) {
  SynchronizationSetup s;
  s.model.n = deck.get_int("model.N");
  s.model.d = static_cast<int>(deck.get_int("model.d"));
  s.model.layers = deck.get_int("model.L");
  s.model.horizon = deck.get_real("model.T");
  s.model.factor = deck.get_bool("attention.enabled") ? deck.get_real("attention.factor") : 0.0;
  s.attention_style = deck.get_text("attention.style");
  s.weights = attention_weights_from_deck(deck, s.model.d, comm.get());
  s.tile = static_cast<int>(deck.get_int("run.tile"));
  s.mlp_enabled = deck.get_bool("mlp.enabled");
  s.mlp = mlp_params_from_deck(deck);
  s.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  s.every = deck.get_int("diagnostics.every");
  s.beta = deck.get_real("attention.beta");
  s.cluster_cosine = deck.get_real("synchronize.cluster_cosine");
  const std::int64_t replicas = deck.get_int("synchronize.replicas"), first = deck.get_int("synchronize.first_replica");
  for (std::int64_t r = 0; r < replicas; ++r) s.replicas.push_back(first + r);
  return s;
}

}  // namespace

DeckSchema SynchronizeStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "synchronize.h5");
  add_tile_key(s);
  add_model_keys(s, {true, 64, 5, 500, 10.0, "dimension d (Thm 1.4 needs lambdabar < 0, possible only for d > 3)",
                     "depth L"});
  add_attention_keys(s);
  add_mlp_keys(s);
  s.add_int("diagnostics.every", 1, "E_beta every k layers (and at the last)", 1);
  s.add_int("synchronize.replicas", 32, "replicas (independent seeds) in this run", 2);
  s.add_int("synchronize.first_replica", 0, "id of the first replica (sweeps give each task its own)", 0);
  s.add_real("synchronize.fit_start", 0.0, "fit the decay rate of log E[E_beta] over times t >= fit_start", 0.0);
  s.add_real("synchronize.cluster_cosine", 0.99, "a pair is in one cluster when cos > c, in antipodal ones when cos < -c",
             0.0, 1.0, true);
  return s;
}

// The attention weights are loaded here, before the memory check: the theorem check looks at them.
SynchronizeStudy::SynchronizeStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), params_(setup_from_deck(comm, deck)), fit_start_(deck.get_real("synchronize.fit_start")),
      kernel_{&activation(params_.mlp.activation), params_.model.d, params_.mlp.sigma_u, params_.mlp.sigma_w},
      prediction_(predict_lyapunov(kernel_, params_.beta)), theorem_(check_theorem(params_, prediction_)) {
  // Pairs of tokens are what synchronizes: one token has none.
  if (params_.model.n < 2)
    throw InputError("deck key 'model.N' = '" + deck.get_text("model.N") + "': tokdyn synchronize needs N >= 2 tokens");
  if (fit_start_ >= params_.model.horizon)
    throw InputError("deck key 'synchronize.fit_start' = '" + deck.get_text("synchronize.fit_start") +
                     "': not below model.T");
}

// One replica per rank at a time: its tokens and their step buffers, its MLP, attention and pair pass.
MemoryEstimate SynchronizeStudy::memory() const {
  const int d = params_.model.d;
  const double nd = static_cast<double>(params_.model.n) * d;
  MemoryEstimate memory;
  memory.add("a replica's tokens and buffers [N, d] x 8", 8 * nd);
  if (params_.mlp_enabled) mlp_memory(memory, params_.mlp.width, d);
  if (params_.model.factor != 0) memory.add("attention weights and ring blocks", 3.0 * d * d + 4 * nd);
  return memory;
}

RunState& SynchronizeStudy::setup() {
  const LyapunovPrediction& p = prediction_;
  char line[320];
  std::snprintf(line, sizeof line, "  kappa(1) = %.6e, kappa'(1) = %.6e, lambdabar = %.6e, lambdabar' = %.6e",
                p.kappa1, p.kappa_prime1, p.lambdabar, p.lambdabar_prime);
  comm_.print(line);
  for (const auto& n : theorem_.notes) comm_.print("  note: " + n);
  state_ = std::make_unique<SynchronizationReplicas>(comm_, params_);
  state_->on_finish([this](RunFile& file) { finish(file); });
  return *state_;
}

std::string SynchronizeStudy::banner() const {
  const SynchronizationSetup& s = params_;
  char line[320];
  std::snprintf(line, sizeof line,
                "tokdyn synchronize: N = %lld, d = %d, L = %lld, T = %g, %s, sigma_U = %g, sigma_W = %g, beta = %g, "
                "attention factor %g, %zu replicas",
                static_cast<long long>(s.model.n), s.model.d, static_cast<long long>(s.model.layers), s.model.horizon,
                s.mlp_enabled ? kernel_.act->name : "no MLP", s.mlp.sigma_u, s.mlp.sigma_w, s.beta, s.model.factor,
                s.replicas.size());
  return line;
}

void SynchronizeStudy::finish(RunFile& file) const {
  const SynchronizationResult r = state_->result();
  const SynchronizationSummary m = summarize_synchronization(r, prediction_.lambdabar_prime, fit_start_, params_.seed);
  print_energy(r, m);
  print_clusters(r);
  write(file, r, m);
}

// E[E_beta] at six times against the bound, and the fitted decay rate against lambdabar'.
void SynchronizeStudy::print_energy(const SynchronizationResult& r, const SynchronizationSummary& m) const {
  const std::size_t S = r.time.size();
  char line[320];
  comm_.print("        t   E[E_beta] (+- s.e.)          bound exp(lambdabar' t) E[E_beta(0)]");
  for (std::size_t k = 0; k < 6; ++k) {
    const std::size_t j = k * (S - 1) / 5;
    std::snprintf(line, sizeof line, "  %7.3f   %.4e +- %.2e         %.4e", r.time[j], m.mean_energy[j],
                  m.standard_error[j], m.bound[j]);
    comm_.print(line);
  }
  std::snprintf(line, sizeof line, "decay rate of log E[E_beta] over t >= %g: %.4f [%.4f, %.4f] (95%% bootstrap); "
                "lambdabar' = %.4f; max E[E_beta]/bound = %.3f", fit_start_, m.decay_rate.value, m.decay_rate.low,
                m.decay_rate.high, prediction_.lambdabar_prime, m.max_ratio_to_bound);
  // The rate is bounded above by lambdabar' (Thm 1.4), not predicted equal to it.
  comm_.print(line + against_prediction(m.decay_rate, prediction_.lambdabar_prime, true));
}

// The last layer's clusters, as means over replicas.
void SynchronizeStudy::print_clusters(const SynchronizationResult& r) const {
  const std::size_t R = r.replicas.size();
  const double pairs = 0.5 * static_cast<double>(params_.model.n) * static_cast<double>(params_.model.n - 1);
  double aligned = 0, antipodal = 0, all_clustered = 0;
  for (std::size_t i = 0; i < R; ++i) {
    aligned += r.aligned_fraction[i] / R, antipodal += r.antipodal_fraction[i] / R;
    // Fractions are counts / pairs: every pair is clustered when the counts add up to all pairs.
    const bool all = (r.aligned_fraction[i] + r.antipodal_fraction[i]) * pairs > pairs - 0.5;
    all_clustered += all / static_cast<double>(R);
  }
  char line[320];
  std::snprintf(line, sizeof line, "last layer, mean over replicas: pairs with cos > %g: %.4f, cos < -%g: %.4f; "
                "replicas with every pair clustered: %.3f", params_.cluster_cosine, aligned, params_.cluster_cosine,
                antipodal, all_clustered);
  comm_.print(line);
}

void SynchronizeStudy::write(RunFile& file, const SynchronizationResult& r, const SynchronizationSummary& m) const {
  const LyapunovPrediction& p = prediction_;
  const std::size_t R = r.replicas.size(), S = r.time.size();
  RunGroup g = file.group("synchronization");
  const std::pair<const char*, double> constants[] = {
      {"kappa1", p.kappa1}, {"kappa_prime1", p.kappa_prime1}, {"lambda1", p.lambda1}, {"lambdabar", p.lambdabar},
      {"lambdabar_prime", p.lambdabar_prime}, {"argmin_u", p.argmin_u}, {"beta", params_.beta},
      {"cluster_cosine", params_.cluster_cosine}, {"fit_start", fit_start_}, {"max_ratio_to_bound", m.max_ratio_to_bound}};
  for (const auto& [name, value] : constants) g.attribute(name, value);
  g.attribute("odd_field", static_cast<std::int64_t>(theorem_.odd_field));
  std::string joined;
  for (const auto& n : theorem_.notes) joined += (joined.empty() ? "" : "\n") + n;
  g.attribute("notes", joined);
  std::vector<double> ids(r.replicas.begin(), r.replicas.end()), layers(r.layer.begin(), r.layer.end()), e0(R);
  for (std::size_t i = 0; i < R; ++i) e0[i] = r.energy[i * S];  // E_beta(0) of each replica
  g.write("replicas", ids);
  g.write("layer", layers);
  g.write("time", r.time);
  g.write("energy", r.energy, {R, S});
  g.write("initial_energy", e0);
  g.write("mean_energy", m.mean_energy);
  g.write("standard_error", m.standard_error);
  g.write("bound", m.bound);
  g.write("decay_rate", {m.decay_rate.value, m.decay_rate.low, m.decay_rate.high});
  g.write("aligned_fraction", r.aligned_fraction);
  g.write("antipodal_fraction", r.antipodal_fraction);
  g.write("min_cosine", r.min_cosine);
}

}  // namespace tokdyn
