// tokdyn lyapunov: kernel constants and Lyapunov exponents of the MLP noise (doc/science.md section 6.3), predicted
// from kappa and measured on pairs of nearby tokens with attention off.
#include <cmath>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/diagnostics/lyapunov.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/keys.hpp"

namespace tokdyn {

DeckSchema lyapunov_schema() {
  DeckSchema s;
  add_run_keys(s, "lyapunov.h5");
  s.add_int("model.d", 5, "dimension d", 2, 1 << 20);
  s.add_int("model.L", 500, "layers of the pair simulation", 1);
  s.add_real("model.T", 20.0, "horizon T of the pair simulation", 0.0, 1e12, true);
  s.add_real("attention.beta", 1.0, "beta of F(u) and lambdabar'", 0.0, 1e6, true);
  add_kernel_keys(s);
  s.add_int("mlp.width", 32, "MLP width m of the pair simulation", 1, 1 << 24);
  s.add_bool("lyapunov.simulate", true, "measure the exponents on pairs of nearby tokens");
  s.add_int("lyapunov.replicas", 4000, "independent pairs", 2);
  s.add_real("lyapunov.separation", 1e-6, "initial (and renormalised) distance r0 of a pair", 0.0, 1e-2, true);
  return s;
}

int run_lyapunov(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  Run run(comm, schema, request, "lyapunov");
  if (run.done()) return 0;
  const Deck& deck = run.deck();
  const int d = static_cast<int>(deck.get_int("model.d"));
  const MlpKernel kernel{&activation(deck.get_text("mlp.activation")), d, deck.get_real("mlp.sigma_u"),
                         deck.get_real("mlp.sigma_w")};
  const double beta = deck.get_real("attention.beta");
  const LyapunovPrediction p = predict_lyapunov(kernel, beta);
  const bool relu = std::string(kernel.act->name) == "relu";
  const double b2 = kernel.sigma_u * kernel.sigma_u + 2 * kernel.sigma_w * kernel.sigma_w;

  char line[320];
  std::snprintf(line, sizeof line, "tokdyn lyapunov: %s, d = %d, sigma_U = %g, sigma_W = %g, beta = %g", kernel.act->name,
                d, kernel.sigma_u, kernel.sigma_w, beta);
  comm.print(line);
  auto row = [&](const char* name, double value, double closed) {
    if (relu && std::isfinite(closed))
      std::snprintf(line, sizeof line, "  %-34s % .6e   (ReLU closed form % .6e)", name, value, closed);
    else
      std::snprintf(line, sizeof line, "  %-34s % .6e", name, value);
    comm.print(line);
  };
  row("kappa(1)", p.kappa1, relu_kappa(d, kernel.sigma_u, kernel.sigma_w, 1.0));
  row("kappa'(1)", p.kappa_prime1, 1.0 / (2 * d));
  row("lambda_1 = (d-3)k'/2 - (d-1)k/2", p.lambda1, -1.0 / (2 * d) - b2 * (d - 1) / 4);
  row("lambdabar = (d-1)k' - (d-3)k", p.lambdabar, 1.0 / d - b2 * (d - 3) / 2);
  row("lambdabar' = -inf F", p.lambdabar_prime, NAN);
  std::snprintf(line, sizeof line, "  %-34s % .6f%s", "argmin of F on [-1, 1)", p.argmin_u,
                p.argmin_u == 1.0 ? " (the limit F(1-) = -lambdabar)" : "");
  comm.print(line);
  row("kappa(1) + kappa'(1) (Var rate)", p.var_rate, NAN);

  // The pairs: one replica study (no pairs without lyapunov.simulate: the predictions alone).
  const bool simulate = deck.get_bool("lyapunov.simulate");
  PairSimulation sim;
  sim.replicas = simulate ? deck.get_int("lyapunov.replicas") : 0;
  sim.layers = deck.get_int("model.L");
  sim.horizon = deck.get_real("model.T");
  sim.width = deck.get_int("mlp.width");
  sim.separation = deck.get_real("lyapunov.separation");
  sim.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  MemoryEstimate memory;
  memory.add("log growth of every pair [replicas, L + 1]", static_cast<double>(sim.replicas) * (sim.layers + 1));
  mlp_memory(memory, sim.width, d);
  run.require_memory(memory);
  if (simulate) {
    std::snprintf(line, sizeof line, "pairs: %lld replicas, L = %lld, T = %g, m = %lld, r0 = %g on %d rank%s",
                  static_cast<long long>(sim.replicas), static_cast<long long>(sim.layers), sim.horizon,
                  static_cast<long long>(sim.width), sim.separation, comm.size(), comm.size() == 1 ? "" : "s");
    comm.print(line);
  }
  PairReplicas pairs(comm, kernel, sim);
  pairs.on_finish([&](RunFile& file) {
    const hid_t g = file.study_group("lyapunov");
    const std::pair<const char*, double> constants[] = {
        {"kappa1", p.kappa1}, {"kappa_prime1", p.kappa_prime1}, {"lambda1", p.lambda1}, {"lambdabar", p.lambdabar},
        {"lambdabar_prime", p.lambdabar_prime}, {"argmin_u", p.argmin_u}, {"var_rate", p.var_rate}};
    for (const auto& [name, value] : constants) h5::write_attribute(g, name, value);
    if (!simulate) return;
    const PairExponents m = pairs.exponents();
    comm.print("  measured slope (95% bootstrap CI)         predicted");
    auto measured = [&](const char* name, const Estimate& e, double predicted) {
      std::snprintf(line, sizeof line, "  %-22s % .4f [% .4f, % .4f]   % .4f", name, e.value, e.low, e.high, predicted);
      comm.print(line);
    };
    measured("E log|X-Y|", m.slope_mean_log, p.lambda1);
    measured("Var log|X-Y|", m.slope_var_log, p.var_rate);
    measured("log E|X-Y|^2", m.slope_log_mean_square, p.lambdabar);
    h5::write_vector(g, "time", m.time, comm.get());
    h5::write_vector(g, "mean_log", m.mean_log, comm.get());
    h5::write_vector(g, "var_log", m.var_log, comm.get());
    h5::write_vector(g, "log_mean_square", m.log_mean_square, comm.get());
    const std::pair<const char*, Estimate> slopes[] = {{"slope_mean_log", m.slope_mean_log},
                                                       {"slope_var_log", m.slope_var_log},
                                                       {"slope_log_mean_square", m.slope_log_mean_square}};
    for (const auto& [name, e] : slopes) h5::write_vector(g, name, {e.value, e.low, e.high}, comm.get());
  });
  return run.execute(pairs, RunInfo{"", "", sim.seed, 0, d, ""});
}

}  // namespace tokdyn
