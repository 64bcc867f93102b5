#include "tokdyn/studies/lyapunov_study.hpp"

#include <cmath>
#include <cstdio>
#include <utility>

#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/diagnostics/fit.hpp"

namespace tokdyn {
namespace {

// What /lyapunov holds (io/outputs.hpp): declared here, beside the code that writes it. The datasets come with
// lyapunov.simulate only.
constexpr OutputDecl kLyapunovOutputs[] = {
    {"lyapunov/log_mean_square", OutputType::real, "1", "layer",
     "log E|X - Y|^2 over the pairs at each layer (the separation log r0 + the summed log growth factors, averaged "
     "stably)."},
    {"lyapunov/mean_log", OutputType::real, "1", "layer",
     "Mean over the lyapunov.replicas pairs of log |X - Y| (chordal separation, renormalised to r0 after each layer, "
     "so log r0 + the summed log growth factors) at each layer."},
    {"lyapunov/slope_log_mean_square", OutputType::real, "1/model time", "estimate",
     "Least-squares slope of log_mean_square against time over [T/10, T] (prediction lambdabar): value, then the low "
     "and high ends of its 95% bootstrap interval over pairs."},
    {"lyapunov/slope_mean_log", OutputType::real, "1/model time", "estimate",
     "Least-squares slope of mean_log against time over [T/10, T] (prediction lambda_1): value, then the low and "
     "high ends of its 95% bootstrap interval over pairs."},
    {"lyapunov/slope_var_log", OutputType::real, "1/model time", "estimate",
     "Least-squares slope of var_log against time over [T/10, T] (prediction kappa(1) + kappa'(1)): value, then the "
     "low and high ends of its 95% bootstrap interval over pairs."},
    {"lyapunov/time", OutputType::real, "model time t", "layer",
     "Model time t_l = l T/L of each layer l = 0..L of the pair simulation."},
    {"lyapunov/var_log", OutputType::real, "1", "layer",
     "Variance over the pairs of log |X - Y| (the summed log growth factors) at each layer."},
    {"lyapunov@argmin_u", OutputType::real, "1", "",
     "The u in [-1, 1] where F attains the infimum that gives lambdabar' (grid plus golden section); 1 when the "
     "limit F(1-) = -lambdabar is the infimum."},
    {"lyapunov@kappa1", OutputType::real, "1/model time", "",
     "kappa(1) = E[sigma(V)^2] + sigma_W^2 of the MLP noise kernel: the variance of each coordinate of G at a point."},
    {"lyapunov@kappa_prime1", OutputType::real, "1/model time", "",
     "kappa'(1) = (1/d) E[sigma'(V)^2] of the MLP noise kernel: the decorrelation of G between nearby points."},
    {"lyapunov@lambda1", OutputType::real, "1/model time", "",
     "Predicted lambda_1 = ((d-3)/2) kappa'(1) - ((d-1)/2) kappa(1), the slope of E log|X_t - Y_t| (against "
     "slope_mean_log)."},
    {"lyapunov@lambdabar", OutputType::real, "1/model time", "",
     "Predicted lambdabar = (d-1) kappa'(1) - (d-3) kappa(1), the slope of log E|X_t - Y_t|^2 (against "
     "slope_log_mean_square)."},
    {"lyapunov@lambdabar_prime", OutputType::real, "1/model time", "",
     "lambdabar' = -inf over u in [-1, 1) of F(u) at attention.beta, the rate of the synchronization bound "
     "(doc/science.md section 6.4); >= lambdabar."},
    {"lyapunov@var_rate", OutputType::real, "1/model time", "",
     "Predicted kappa(1) + kappa'(1), the slope of Var log|X_t - Y_t| (against slope_var_log)."},
};
const DeclaredOutputs kLyapunovDeclared("lyapunov", kLyapunovOutputs);

// The measured moments at every layer and their slopes [value, low, high].
void write_exponents(RunGroup& g, const PairExponents& m) {
  g.write("time", m.time);
  g.write("mean_log", m.mean_log);
  g.write("var_log", m.var_log);
  g.write("log_mean_square", m.log_mean_square);
  const std::pair<const char*, Estimate> slopes[] = {{"slope_mean_log", m.slope_mean_log},
                                                     {"slope_var_log", m.slope_var_log},
                                                     {"slope_log_mean_square", m.slope_log_mean_square}};
  for (const auto& [name, e] : slopes) g.write(name, {e.value, e.low, e.high});
}

}  // namespace

DeckSchema LyapunovStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "lyapunov.h5");
  add_model_keys(s, {false, 0, 5, 500, 20.0, "dimension d", "layers of the pair simulation"});
  s.add_real("attention.beta", 1.0, "beta of F(u) and lambdabar'", 0.0, 1e6, true);
  add_kernel_keys(s);
  s.add_int("mlp.width", 32, "MLP width m of the pair simulation", 1, 1 << 24);
  s.add_bool("lyapunov.simulate", true, "measure the exponents on pairs of nearby tokens");
  s.add_int("lyapunov.replicas", 4000, "independent pairs", 2);
  s.add_real("lyapunov.separation", 1e-6, "initial (and renormalised) distance r0 of a pair", 0.0, 1e-2, true);
  return s;
}

LyapunovStudy::LyapunovStudy(const Comm& comm, const Deck& deck)
    : comm_(comm),
      kernel_{&activation(deck.get_text("mlp.activation")), static_cast<int>(deck.get_int("model.d")),
              deck.get_real("mlp.sigma_u"), deck.get_real("mlp.sigma_w")},
      beta_(deck.get_real("attention.beta")), prediction_(predict_lyapunov(kernel_, beta_)),
      simulate_(deck.get_bool("lyapunov.simulate")) {
  sim_.replicas = simulate_ ? deck.get_int("lyapunov.replicas") : 0;
  sim_.layers = deck.get_int("model.L");
  sim_.horizon = deck.get_real("model.T");
  sim_.width = deck.get_int("mlp.width");
  sim_.separation = deck.get_real("lyapunov.separation");
  sim_.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
}

MemoryEstimate LyapunovStudy::memory() const {
  MemoryEstimate memory;
  memory.add("log growth of every pair [replicas, L + 1]", static_cast<double>(sim_.replicas) * (sim_.layers + 1));
  mlp_memory(memory, sim_.width, kernel_.d);
  return memory;
}

RunState& LyapunovStudy::setup() {
  print_predictions();
  pairs_ = std::make_unique<PairReplicas>(comm_, kernel_, sim_);
  pairs_->on_finish([this](RunFile& file) { finish(file); });
  return *pairs_;
}

std::string LyapunovStudy::banner() const {
  char line[320];
  int n = std::snprintf(line, sizeof line, "tokdyn lyapunov: %s, d = %d, sigma_U = %g, sigma_W = %g, beta = %g",
                        kernel_.act->name, kernel_.d, kernel_.sigma_u, kernel_.sigma_w, beta_);
  if (simulate_)
    std::snprintf(line + n, sizeof line - n, "; pairs: %lld replicas, L = %lld, T = %g, m = %lld, r0 = %g",
                  static_cast<long long>(sim_.replicas), static_cast<long long>(sim_.layers), sim_.horizon,
                  static_cast<long long>(sim_.width), sim_.separation);
  return line;
}

// The predicted constants, with the ReLU closed forms beside them where there are.
void LyapunovStudy::print_predictions() const {
  const LyapunovPrediction& p = prediction_;
  const int d = kernel_.d;
  const bool relu = std::string(kernel_.act->name) == "relu";
  const double b2 = kernel_.sigma_u * kernel_.sigma_u + 2 * kernel_.sigma_w * kernel_.sigma_w;
  char line[320];
  auto row = [&](const char* name, double value, double closed) {
    if (relu && std::isfinite(closed))
      std::snprintf(line, sizeof line, "  %-34s % .6e   (ReLU closed form % .6e)", name, value, closed);
    else
      std::snprintf(line, sizeof line, "  %-34s % .6e", name, value);
    comm_.print(line);
  };
  row("kappa(1)", p.kappa1, relu_kappa(d, kernel_.sigma_u, kernel_.sigma_w, 1.0));
  row("kappa'(1)", p.kappa_prime1, 1.0 / (2 * d));
  row("lambda_1 = (d-3)k'/2 - (d-1)k/2", p.lambda1, -1.0 / (2 * d) - b2 * (d - 1) / 4);
  row("lambdabar = (d-1)k' - (d-3)k", p.lambdabar, 1.0 / d - b2 * (d - 3) / 2);
  row("lambdabar' = -inf F", p.lambdabar_prime, NAN);
  std::snprintf(line, sizeof line, "  %-34s % .6f%s", "argmin of F on [-1, 1)", p.argmin_u,
                p.argmin_u == 1.0 ? " (the limit F(1-) = -lambdabar)" : "");
  comm_.print(line);
  row("kappa(1) + kappa'(1) (Var rate)", p.var_rate, NAN);
}

void LyapunovStudy::finish(RunFile& file) const {
  const LyapunovPrediction& p = prediction_;
  RunGroup g = file.group("lyapunov");
  const std::pair<const char*, double> constants[] = {
      {"kappa1", p.kappa1}, {"kappa_prime1", p.kappa_prime1}, {"lambda1", p.lambda1}, {"lambdabar", p.lambdabar},
      {"lambdabar_prime", p.lambdabar_prime}, {"argmin_u", p.argmin_u}, {"var_rate", p.var_rate}};
  for (const auto& [name, value] : constants) g.attribute(name, value);
  if (!simulate_) return;
  const PairExponents m = pairs_->exponents();
  print_measured(m);
  write_exponents(g, m);
}

// The measured slopes (bootstrap over pairs) next to the predicted ones.
void LyapunovStudy::print_measured(const PairExponents& m) const {
  char line[320];
  comm_.print("  measured slope (95% bootstrap CI)         predicted");
  auto measured = [&](const char* name, const Estimate& e, double predicted) {
    std::snprintf(line, sizeof line, "  %-22s % .4f [% .4f, % .4f]   % .4f", name, e.value, e.low, e.high, predicted);
    comm_.print(line + against_prediction(e, predicted));
  };
  measured("E log|X-Y|", m.slope_mean_log, prediction_.lambda1);
  measured("Var log|X-Y|", m.slope_var_log, prediction_.var_rate);
  measured("log E|X-Y|^2", m.slope_log_mean_square, prediction_.lambdabar);
}

}  // namespace tokdyn
