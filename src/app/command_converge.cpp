// tokdyn converge: the coupled depth (L) and width (m) convergence studies of doc/science.md section 6.1, over
// replicas, with errors per level and a fitted log-log slope (bootstrap CI over replicas).
#include <cmath>
#include <cstdio>

#include "commands.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/studies/convergence.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/keys.hpp"

namespace tokdyn {

DeckSchema converge_schema() {
  DeckSchema s;
  add_run_keys(s, "converge.h5");
  add_tile_key(s);
  s.add_int("model.N", 64, "depth and width studies: tokens N", 1, 1 << 20);
  s.add_int("model.d", 5, "dimension d", 2, 1 << 16);
  s.add_int("model.L", 64, "width and tokens studies: depth L (tokens: layers of T / L each)", 1);
  s.add_real("model.T", 1.0, "horizon T", 0.0, 1e12, true);
  add_attention_keys(s);
  add_kernel_keys(s);
  add_field_keys(s);
  s.add_choice("converge.study", "depth", {"depth", "width", "tokens"},
               "depth: L = L0 2^j; width: m = m0 2^j; tokens: N = N0 2^j against the mean-field solution");
  s.add_int("converge.replicas", 8, "replicas (independent seeds) in this run", 1);
  s.add_int("converge.first_replica", 0, "id of the first replica (sweeps give each task its own)", 0);
  s.add_int("converge.levels", 4, "number of levels j = 0 .. levels-1", 1, 30);
  s.add_int("converge.L0", 8, "depth: coarsest L", 1);
  s.add_int("converge.m0", 16, "width: narrowest m", 1);
  s.add_int("converge.task", -1, "a sweep's array task: only level task / replicas and replica task % replicas "
             "(-1: every level and replica)", -1);
  s.add_int("converge.N0", 64, "tokens: smallest N", 1, std::int64_t(1) << 40);
  s.add_int("converge.every", 1, "tokens: layers between two distance evaluations (and the last)", 1);
  s.add_choice("converge.distance", "auto", {"auto", "circular", "assignment", "sliced"},
               "tokens: W2 by circular transport (d = 2), exact assignment or slicing (auto: circular on S^1, "
               "assignment when the sizes allow, else sliced)");
  s.add_choice("converge.particle_style", "", [] {
    std::vector<std::string> names = attention_styles().names();
    names.insert(names.begin(), "");
    return names;
  }(), "tokens: attention style of the N-token systems (empty: attention.style, as the reference)");
  s.add_int("converge.sliced_directions", 64, "tokens: directions of the sliced W2", 1, 1 << 20);
  s.add_int("converge.assignment_max", 2048, "tokens, auto: largest point count for the exact assignment", 1);
  s.add_bool("noise.enabled", true, "tokens: apply the common noise");
  add_meanfield_keys(s);
  s.add_int("converge.reference_factor", 8, "depth: reference steps = factor x the finest L", 2);
  s.add_choice("converge.reference_scheme", "heun", sde_schemes().names(), "depth: scheme of the reference SDE");
  return s;
}

StudyTasks study_tasks(const Deck& deck, std::int64_t base) {
  const std::int64_t replicas = deck.get_int("converge.replicas"), first = deck.get_int("converge.first_replica");
  const int levels = static_cast<int>(deck.get_int("converge.levels"));
  const std::int64_t task = deck.get_int("converge.task");
  if (task >= levels * replicas)
    throw InputError("deck key 'converge.task' = " + std::to_string(task) + ": out of range (levels x replicas = " +
                     std::to_string(levels * replicas) + ")");
  StudyTasks t;
  for (int j = 0; j < levels; ++j)
    if (task < 0 || j == task / replicas) t.levels.push_back(base << j);
  for (std::int64_t r = 0; r < replicas; ++r)
    if (task < 0 || r == task % replicas) t.replicas.push_back(first + r);
  return t;
}

Estimate level_slope(const std::vector<std::int64_t>& levels, const std::vector<double>& values, std::size_t replicas) {
  const std::size_t J = levels.size();
  // Slope of log (mean over the resampled replicas) against log level: the bootstrap resamples replicas.
  return bootstrap(static_cast<int>(replicas), [&](const std::vector<int>& w) {
    std::vector<double> lx, ly;
    for (std::size_t j = 0; j < J; ++j) {
      double s1 = 0, n = 0;
      for (std::size_t i = 0; i < replicas; ++i) s1 += w[i] * values[i * J + j], n += w[i];
      lx.push_back(std::log(static_cast<double>(levels[j])));
      ly.push_back(std::log(s1 / n));
    }
    return least_squares_slope(lx, ly);
  });
}

int run_converge(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  Run run(comm, schema, request, "converge");
  if (run.done()) return 0;
  const Deck& deck = run.deck();
  const std::string study = deck.get_text("converge.study");
  if (study == "tokens") return run_converge_tokens(run);
  ConvergenceSetup s;
  s.n = deck.get_int("model.N");
  s.d = static_cast<int>(deck.get_int("model.d"));
  s.horizon = deck.get_real("model.T");
  s.factor = deck.get_bool("attention.enabled") ? deck.get_real("attention.factor") : 0.0;
  s.attention_style = deck.get_text("attention.style");
  s.tile = static_cast<int>(deck.get_int("run.tile"));
  s.field_name = deck.get_text("noise.field");
  s.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  const int levels = static_cast<int>(deck.get_int("converge.levels"));
  const std::int64_t base = deck.get_int(study == "depth" ? "converge.L0" : "converge.m0");
  StudyTasks tasks = study_tasks(deck, base);
  const std::vector<std::int64_t>& values = tasks.levels;
  s.replicas = tasks.replicas;
  // One replica on one rank at a time: its J + 1 token systems, the Gram and covariance matrices of the
  // width study, the random features and attention weights of each system.
  const double J = static_cast<double>(values.size()), nd = static_cast<double>(s.n) * s.d, n = static_cast<double>(s.n);
  MemoryEstimate memory;
  memory.add("token systems of a replica [J + 1, N, d] x 6", 6 * (J + 1) * nd);
  if (s.factor != 0) memory.add("attention weights [d, d] x 3 per system", 3 * (J + 1) * s.d * double(s.d));
  if (study == "depth")
    memory.add("random features [M, d] and modes [N, M] per system",
               (J + 1) * (static_cast<double>(deck.get_int("noise.features")) + 1) * (s.d + 2 * n));
  else
    memory.add("Gram, covariance and its root [N, N] x 4, hidden [N, m]", 4 * n * n + n * static_cast<double>(values.back()));
  run.require_memory(memory);
  s.weights = attention_weights_from_deck(deck, s.d, comm.get());
  s.field = field_params_from_deck(deck, s.d);

  std::unique_ptr<ReplicaStudy> state;
  std::int64_t reference = 0;
  char line[256];
  if (study == "depth") {
    DepthStudy d;
    d.layers = values;
    reference = (base << (levels - 1)) * deck.get_int("converge.reference_factor");
    d.reference_layers = reference;
    d.reference_scheme = deck.get_text("converge.reference_scheme");
    std::snprintf(line, sizeof line, "tokdyn converge depth: N = %lld, d = %d, T = %g, reference %s at L = %lld, %zu replicas, %s field",
                  static_cast<long long>(s.n), s.d, s.horizon, d.reference_scheme.c_str(),
                  static_cast<long long>(reference), s.replicas.size(), s.field_name.c_str());
    state = std::make_unique<DepthReplicas>(comm, s, d);
  } else {
    WidthStudy w;
    w.widths = values;
    w.layers = deck.get_int("model.L");
    std::snprintf(line, sizeof line, "tokdyn converge width: N = %lld, d = %d, L = %lld, T = %g, %zu replicas",
                  static_cast<long long>(s.n), s.d, static_cast<long long>(w.layers), s.horizon, s.replicas.size());
    state = std::make_unique<WidthReplicas>(comm, s, w);
  }
  run.print(line);

  state->on_finish([&](RunFile& file) {
    const ConvergenceResult r = study == "depth" ? static_cast<DepthReplicas&>(*state).result()
                                                 : static_cast<WidthReplicas&>(*state).result();
    // Per level: mean over replicas with a normal 95% interval; slope of log mean against log level.
    const std::size_t J = r.levels.size(), R = r.replicas.size();
    char text[256];
    comm.print(study == "depth" ? "      L   mse_grid (95% CI)                 mse_sup          mse_final"
                                : "      m   mse (95% CI)                      mse_sup          mse_final");
    for (std::size_t j = 0; j < J; ++j) {
      double s1 = 0, s2 = 0, sup = 0, fin = 0;
      for (std::size_t i = 0; i < R; ++i) {
        const double e = r.mse_grid[i * J + j];
        s1 += e, s2 += e * e, sup += r.mse_sup[i * J + j], fin += r.mse_final[i * J + j];
      }
      const double mean = s1 / R, sd = R > 1 ? std::sqrt(std::max(0.0, (s2 - R * mean * mean) / (R - 1))) : 0;
      std::snprintf(text, sizeof text, "  %5lld   %.4e +- %.2e            %.4e       %.4e",
                    static_cast<long long>(r.levels[j]), mean, 1.96 * sd / std::sqrt(static_cast<double>(R)), sup / R,
                    fin / R);
      comm.print(text);
    }
    if (J >= 2) {
      const Estimate g = level_slope(r.levels, r.mse_grid, R), u = level_slope(r.levels, r.mse_sup, R);
      std::snprintf(text, sizeof text,
                    "slope of log mse_grid: %.3f [%.3f, %.3f]; of log mse_sup: %.3f [%.3f, %.3f] (expected -1)", g.value,
                    g.low, g.high, u.value, u.low, u.high);
      comm.print(text);
    }
    const hid_t g = file.study_group("converge");
    h5::write_attribute(g, "study", study);
    h5::write_attribute(g, "reference_layers", reference);
    std::vector<double> lv(r.levels.begin(), r.levels.end()), rp(r.replicas.begin(), r.replicas.end());
    h5::write_vector(g, "levels", lv, comm.get());
    h5::write_vector(g, "replicas", rp, comm.get());
    h5::write_vector(g, "mse_grid", r.mse_grid, comm.get(), {R, J});
    h5::write_vector(g, "mse_sup", r.mse_sup, comm.get(), {R, J});
    h5::write_vector(g, "mse_final", r.mse_final, comm.get(), {R, J});
  });
  return run.execute(*state, RunInfo{"", "", s.seed, 0, s.d, ""});
}

}  // namespace tokdyn
