#include "tokdyn/studies/converge_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"

namespace tokdyn {
namespace {

// What /converge holds (io/outputs.hpp): declared here, beside the code that writes it. The depth and width
// studies write levels, replicas and mse_*; the tokens study the rest.
constexpr OutputDecl kConvergeOutputs[] = {
    {"converge/energy_error", OutputType::real, "1", "replica, level, sample",
     "tokens study: |E_beta(mu^N_t) - E_beta(mu_t)|, the error of the interaction energy of the N-token measure "
     "against the mean-field reference at each sample time."},
    {"converge/energy_error_sup", OutputType::real, "1", "replica, level",
     "tokens study: sup over the sample times of energy_error."},
    {"converge/levels", OutputType::real, "layers (depth), width m (width), tokens (tokens)", "level",
     "Value of each level j of the study (base 2^j): depth: the layers L; width: the MLP width m; tokens: the token "
     "count N."},
    {"converge/mean_error", OutputType::real, "1", "replica, level, sample",
     "tokens study: |int x dmu^N_t - int x dmu_t|, the Euclidean norm of the error of the mean token against the "
     "mean-field reference at each sample time."},
    {"converge/mean_error_sup", OutputType::real, "1", "replica, level",
     "tokens study: sup over the sample times of mean_error."},
    {"converge/mmd2", OutputType::real, "1", "replica, level, sample",
     "tokens study: squared MMD with the kernel e^{beta <x, y>} between the N-token measure and the mean-field "
     "reference at each sample time."},
    {"converge/mmd2_sup", OutputType::real, "1", "replica, level",
     "tokens study: sup over the sample times of mmd2 (MMD^2)."},
    {"converge/mse_final", OutputType::real, "1", "replica, level",
     "Mean-square error (1/N) sum_i |X^i - Xbar^i|^2 at the final time T (depth: against the reference SDE; width: "
     "against the limit-field system)."},
    {"converge/mse_grid", OutputType::real, "1", "replica, level",
     "depth: sup over the level's layer times t_l of the mean-square error (1/N) sum_i |X^i_l - Xbar^i(t_l)|^2 against "
     "the reference SDE solution on the same Brownian path; width: sup over layers of (1/N) sum_i |X^i_l(m) - "
     "X^i_l(limit field)|^2."},
    {"converge/mse_sup", OutputType::real, "1", "replica, level",
     "depth: sup over every reference time of the mean-square error (1/N) sum_i |X^i - Xbar^i|^2 of the level's "
     "piecewise-constant trajectory against the reference; width: equal to mse_grid."},
    {"converge/replicas", OutputType::real, "1", "replica",
     "Replica id of each row (converge.first_replica + r), which keys the replica's random streams."},
    {"converge/times", OutputType::real, "model time t", "sample",
     "tokens study: model times of the distance samples, every converge.every layers and the last."},
    {"converge/w2", OutputType::real, "1", "replica, level, sample",
     "tokens study: squared Wasserstein distance W2^2 between the N-token measure and the mean-field reference at each "
     "sample time, by the converge.distance attribute: circular (arc-length cost, S^1), assignment (geodesic cost) or "
     "sliced (SW2^2, chordal, smaller than W2^2 by about d)."},
    {"converge/w2_final", OutputType::real, "1", "replica, level",
     "tokens study: w2 (W2^2) at the final time T."},
    {"converge/w2_sup", OutputType::real, "1", "replica, level",
     "tokens study: sup over the sample times of w2 (W2^2)."},
    {"converge@bound_slope", OutputType::real, "1", "",
     "tokens study: exponent of the bound r_d(N) of E sup_t W2^2 in Prop 1.2, the log-log slope against N it allows: "
     "-1/2 for d <= 4 (the log at d = 4 aside), -2/d above."},
    {"converge@d", OutputType::integer, "1", "", "tokens study: dimension d (model.d): the tokens lie on S^{d-1}."},
    {"converge@distance", OutputType::text, "", "",
     "tokens study: the W2 of w2 (converge.distance, auto resolved): circular (exact, arc-length cost, d = 2), "
     "assignment (exact, geodesic cost) or sliced (SW2^2, chordal, converge.sliced_directions directions)."},
    {"converge@reference_layers", OutputType::integer, "layers", "",
     "depth study: steps of the reference SDE solution, converge.reference_factor x the finest L of the whole study "
     "(L0 2^(levels-1)), whatever converge.task; width: 0."},
    {"converge@reference_size", OutputType::integer, "count", "",
     "tokens study: size of the mean-field reference: its cells (meanfield.cells, grid solver) or points "
     "(meanfield.points, quadrature)."},
    {"converge@reference_solver", OutputType::text, "", "",
     "tokens study: solver of the mean-field reference (meanfield.solver): grid or quadrature."},
    {"converge@sharp_slope", OutputType::real, "1", "",
     "tokens study: log-log slope against N of W2^2 for uniform measures on S^{d-1}, k = d - 1: -1 for k <= 2 (the log "
     "at k = 2 aside), -2/k above."},
    {"converge@study", OutputType::text, "", "",
     "The study (converge.study): depth (L = L0 2^j against a reference SDE solution), width (m = m0 2^j against the "
     "limit field) or tokens (N = N0 2^j against the mean-field solution)."},
};
const DeclaredOutputs kConvergeDeclared("converge", kConvergeOutputs);

// Levels base 2^j and replica ids a converge run covers (all, or one converge.task of a sweep).
struct StudyTasks {
  std::vector<std::int64_t> levels, replicas;
};

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

// Bootstrap over replicas of the slope of log mean against log level; values [replicas, levels].
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

// sup over times (or the last time) of series [R, J, S] -> [R, J].
std::vector<double> over_time(const std::vector<double>& series, std::size_t rj, std::size_t S, bool last) {
  std::vector<double> out(rj, 0.0);
  for (std::size_t k = 0; k < rj; ++k)
    for (std::size_t t = 0; t < S; ++t) out[k] = last ? series[k * S + t] : std::max(out[k], series[k * S + t]);
  return out;
}

// Mean over the R replicas of level j of values [R, J], with the half-width of its normal 95% interval.
struct LevelMean {
  double mean, half_width;
};
LevelMean level_mean(const std::vector<double>& values, std::size_t j, std::size_t R, std::size_t J) {
  double s1 = 0, s2 = 0;
  for (std::size_t i = 0; i < R; ++i) {
    const double e = values[i * J + j];
    s1 += e, s2 += e * e;
  }
  const double mean = s1 / R, sd = R > 1 ? std::sqrt(std::max(0.0, (s2 - R * mean * mean) / (R - 1))) : 0;
  return {mean, 1.96 * sd / std::sqrt(static_cast<double>(R))};
}

// Sum over the R replicas of level j of values [R, J].
double level_sum(const std::vector<double>& values, std::size_t j, std::size_t R, std::size_t J) {
  double s = 0;
  for (std::size_t i = 0; i < R; ++i) s += values[i * J + j];
  return s;
}

}  // namespace

DeckSchema ConvergeStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "converge.h5");
  add_tile_key(s);
  add_model_keys(s, {true, 64, 5, 64, 1.0, "dimension d",
                     "width and tokens studies: depth L (tokens: layers of T / L each); depth: unused (converge.L0)"});
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

ConvergeStudy::ConvergeStudy(const Comm& comm, const Deck& deck) {
  if (deck.get_text("converge.study") == "tokens")
    study_ = std::make_unique<ChaosConvergenceStudy>(comm, deck);
  else
    study_ = std::make_unique<ConvergenceStudy>(comm, deck);
}

// --- depth and width ---

ConvergenceStudy::ConvergenceStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), depth_(deck.get_text("converge.study") == "depth"),
      attention_weights_(attention_spec_from_deck(deck).weights) {
  ConvergenceSetup& s = params_;
  s.n = deck.get_int("model.N");
  s.d = static_cast<int>(deck.get_int("model.d"));
  s.horizon = deck.get_real("model.T");
  s.factor = deck.get_bool("attention.enabled") ? deck.get_real("attention.factor") : 0.0;
  s.attention_style = deck.get_text("attention.style");
  s.tile = static_cast<int>(deck.get_int("run.tile"));
  s.field_name = deck.get_text("noise.field");
  s.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  s.field = field_params_from_deck(deck, s.d);
  const int levels = static_cast<int>(deck.get_int("converge.levels"));
  const std::int64_t base = deck.get_int(depth_ ? "converge.L0" : "converge.m0");
  StudyTasks tasks = study_tasks(deck, base);
  s.replicas = tasks.replicas;
  if (depth_) {
    depth_study_.layers = tasks.levels;
    // The reference is finer than the finest level of the whole study, so that the tasks of a sweep agree.
    depth_study_.reference_layers = (base << (levels - 1)) * deck.get_int("converge.reference_factor");
    depth_study_.reference_scheme = deck.get_text("converge.reference_scheme");
  } else {
    width_study_.widths = tasks.levels;
    width_study_.layers = deck.get_int("model.L");
  }
}

MemoryEstimate ConvergenceStudy::memory() const {
  const ConvergenceSetup& s = params_;
  const std::vector<std::int64_t>& values = depth_ ? depth_study_.layers : width_study_.widths;
  // One replica on one rank at a time: its J + 1 token systems, the Gram and covariance matrices of the
  // width study, the random features and attention weights of each system.
  const double J = static_cast<double>(values.size()), nd = static_cast<double>(s.n) * s.d, n = static_cast<double>(s.n);
  MemoryEstimate memory;
  memory.add("token systems of a replica [J + 1, N, d] x 6", 6 * (J + 1) * nd);
  if (s.factor != 0) memory.add("attention weights [d, d] x 3 per system", 3 * (J + 1) * s.d * double(s.d));
  if (depth_)
    memory.add("random features [M, d] and modes [N, M] per system",
               (J + 1) * (static_cast<double>(s.field.features) + 1) * (s.d + 2 * n));
  else
    memory.add("Gram, covariance and its root [N, N] x 4, hidden [N, m]", 4 * n * n + n * static_cast<double>(values.back()));
  return memory;
}

RunState& ConvergenceStudy::setup() {
  params_.weights = make_attention_weights(attention_weights_, params_.d, comm_.get());
  if (depth_)
    state_ = std::make_unique<DepthReplicas>(comm_, params_, depth_study_);
  else
    state_ = std::make_unique<WidthReplicas>(comm_, params_, width_study_);
  state_->on_finish([this](RunFile& file) { finish(file); });
  return *state_;
}

std::string ConvergenceStudy::banner() const {
  const ConvergenceSetup& s = params_;
  char line[256];
  if (depth_)
    std::snprintf(line, sizeof line, "tokdyn converge depth: N = %lld, d = %d, T = %g, reference %s at L = %lld, %zu replicas, %s field",
                  static_cast<long long>(s.n), s.d, s.horizon, depth_study_.reference_scheme.c_str(),
                  static_cast<long long>(depth_study_.reference_layers), s.replicas.size(), s.field_name.c_str());
  else
    std::snprintf(line, sizeof line, "tokdyn converge width: N = %lld, d = %d, L = %lld, T = %g, %zu replicas",
                  static_cast<long long>(s.n), s.d, static_cast<long long>(width_study_.layers), s.horizon,
                  s.replicas.size());
  return line;
}

ConvergenceResult ConvergenceStudy::result() const {
  return depth_ ? static_cast<const DepthReplicas&>(*state_).result() : static_cast<const WidthReplicas&>(*state_).result();
}

void ConvergenceStudy::finish(RunFile& file) const {
  const ConvergenceResult r = result();
  print_levels(r);
  write(file, r);
}

// Per level: mean over replicas with a normal 95% interval; slope of log mean against log level.
void ConvergenceStudy::print_levels(const ConvergenceResult& r) const {
  const std::size_t J = r.levels.size(), R = r.replicas.size();
  char text[256];
  comm_.print(depth_ ? "      L   mse_grid (95% CI)                 mse_sup          mse_final"
                     : "      m   mse (95% CI)                      mse_sup          mse_final");
  for (std::size_t j = 0; j < J; ++j) {
    const LevelMean grid = level_mean(r.mse_grid, j, R, J);
    std::snprintf(text, sizeof text, "  %5lld   %.4e +- %.2e            %.4e       %.4e",
                  static_cast<long long>(r.levels[j]), grid.mean, grid.half_width, level_sum(r.mse_sup, j, R, J) / R,
                  level_sum(r.mse_final, j, R, J) / R);
    comm_.print(text);
  }
  if (J >= 2) {
    const Estimate g = level_slope(r.levels, r.mse_grid, R), u = level_slope(r.levels, r.mse_sup, R);
    std::snprintf(text, sizeof text,
                  "slope of log mse_grid: %.3f [%.3f, %.3f]; of log mse_sup: %.3f [%.3f, %.3f] (expected -1)", g.value,
                  g.low, g.high, u.value, u.low, u.high);
    const std::string flag = against_prediction(g, -1).empty() ? against_prediction(u, -1) : against_prediction(g, -1);
    comm_.print(text + flag);
  }
}

void ConvergenceStudy::write(RunFile& file, const ConvergenceResult& r) const {
  const std::size_t J = r.levels.size(), R = r.replicas.size();
  RunGroup g = file.group("converge");
  g.attribute("study", std::string(depth_ ? "depth" : "width"));
  g.attribute("reference_layers", depth_ ? depth_study_.reference_layers : std::int64_t(0));
  std::vector<double> lv(r.levels.begin(), r.levels.end()), rp(r.replicas.begin(), r.replicas.end());
  g.write("levels", lv);
  g.write("replicas", rp);
  g.write("mse_grid", r.mse_grid, {R, J});
  g.write("mse_sup", r.mse_sup, {R, J});
  g.write("mse_final", r.mse_final, {R, J});
}

// --- tokens ---

struct ChaosConvergenceStudy::Summary {
  std::vector<double> w2_sup, w2_final, mmd2_sup, energy_sup, mean_sup;  // [R, J]
};

ChaosConvergenceStudy::ChaosConvergenceStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), d_(static_cast<int>(deck.get_int("model.d"))), layers_(deck.get_int("model.L")),
      horizon_(deck.get_real("model.T")), solver_(deck.get_text("meanfield.solver")),
      reference_size_(deck.get_int(solver_ == "grid" ? "meanfield.cells" : "meanfield.points")),
      points_(deck.get_int("meanfield.points")) {
  const StudyTasks tasks = study_tasks(deck, deck.get_int("converge.N0"));
  study_.sizes = tasks.levels;
  study_.replicas = tasks.replicas;
  study_.every = deck.get_int("converge.every");
  study_.sliced_directions = deck.get_int("converge.sliced_directions");
  study_.beta = deck.get_real("attention.beta");
  // The distance is decided from every level of the study, so that the tasks of a sweep agree.
  std::vector<std::int64_t> all_sizes;
  for (std::int64_t j = 0; j < deck.get_int("converge.levels"); ++j) all_sizes.push_back(deck.get_int("converge.N0") << j);
  study_.reference = meanfield_spec_from_deck(deck);
  study_.particle_style = deck.get_text("converge.particle_style");
  study_.distance = chaos_distance(study_.reference, deck.get_text("converge.distance"),
                                   deck.get_int("converge.assignment_max"), all_sizes);
}

// The reference solver and the particle systems of every level, all distributed over the ranks.
MemoryEstimate ChaosConvergenceStudy::memory() const {
  MemoryEstimate memory;
  meanfield_memory(memory, study_.reference, comm_.size());
  double tokens = 0;
  for (std::int64_t n : study_.sizes) tokens += static_cast<double>(n);
  memory.add("particle systems [sum N / P, d] x 12", 12 * tokens / comm_.size() * d_);
  memory.add("gathered measures [M + N, d] x 2", 2 * (static_cast<double>(points_) + tokens) * d_);
  return memory;
}

RunState& ChaosConvergenceStudy::setup() {
  state_ = std::make_unique<ChaosReplicas>(comm_, study_);
  state_->on_finish([this](RunFile& file) { finish(file); });
  return *state_;
}

std::string ChaosConvergenceStudy::banner() const {
  char line[320];
  std::snprintf(line, sizeof line,
                "tokdyn converge tokens: d = %d, N = %lld .. %lld, L = %lld, T = %g, reference %s (%lld), %s W2, %zu replicas",
                d_, static_cast<long long>(study_.sizes.front()), static_cast<long long>(study_.sizes.back()),
                static_cast<long long>(layers_), horizon_, solver_.c_str(), static_cast<long long>(reference_size_),
                study_.distance.c_str(), study_.replicas.size());
  return line;
}

void ChaosConvergenceStudy::finish(RunFile& file) const {
  const ChaosResult r = state_->result();
  const std::size_t RJ = study_.replicas.size() * study_.sizes.size(), S = r.times.size();
  const Summary s{over_time(r.w2, RJ, S, false), over_time(r.w2, RJ, S, true), over_time(r.mmd2, RJ, S, false),
                  over_time(r.energy_error, RJ, S, false), over_time(r.mean_error, RJ, S, false)};
  print_levels(s);
  write(file, r, s);
}

// Per level: means over replicas of the sups over time, W2^2 with a normal 95% interval; the slopes of
// log W2^2 and log MMD^2 against log N next to the bound r_d(N) and the rate for uniform measures.
void ChaosConvergenceStudy::print_levels(const Summary& s) const {
  char text[320];
  const std::size_t J = study_.sizes.size(), R = study_.replicas.size();
  comm_.print("        N   E sup_t W2^2 (95% CI)        E sup_t MMD^2   E sup |dE_beta|   E sup |d mean|");
  for (std::size_t j = 0; j < J; ++j) {
    const LevelMean w2 = level_mean(s.w2_sup, j, R, J);
    std::snprintf(text, sizeof text, "  %7lld   %.4e +- %.2e        %.4e      %.4e        %.4e",
                  static_cast<long long>(study_.sizes[j]), w2.mean, w2.half_width, level_sum(s.mmd2_sup, j, R, J) / R,
                  level_sum(s.energy_sup, j, R, J) / R, level_sum(s.mean_sup, j, R, J) / R);
    comm_.print(text);
  }
  if (J >= 2) {
    const Estimate w = level_slope(study_.sizes, s.w2_sup, R), m = level_slope(study_.sizes, s.mmd2_sup, R);
    std::snprintf(text, sizeof text,
                  "slope of log E sup W2^2: %.3f [%.3f, %.3f] (bound r_d: %.3f, uniform measures: %.3f); of MMD^2: %.3f [%.3f, %.3f]",
                  w.value, w.low, w.high, chaos_bound_slope(d_), chaos_sharp_slope(d_), m.value, m.low, m.high);
    comm_.print(text);
  }
}

void ChaosConvergenceStudy::write(RunFile& file, const ChaosResult& r, const Summary& s) const {
  const std::size_t J = study_.sizes.size(), R = study_.replicas.size(), S = r.times.size();
  RunGroup g = file.group("converge");
  g.attribute("study", std::string("tokens"));
  g.attribute("distance", study_.distance);
  g.attribute("d", static_cast<std::int64_t>(d_));
  g.attribute("bound_slope", chaos_bound_slope(d_));
  g.attribute("sharp_slope", chaos_sharp_slope(d_));
  g.attribute("reference_solver", solver_);
  g.attribute("reference_size", reference_size_);
  std::vector<double> lv(study_.sizes.begin(), study_.sizes.end()), rp(study_.replicas.begin(), study_.replicas.end());
  g.write("levels", lv);
  g.write("replicas", rp);
  g.write("times", r.times);
  g.write("w2", r.w2, {R, J, S});
  g.write("mmd2", r.mmd2, {R, J, S});
  g.write("energy_error", r.energy_error, {R, J, S});
  g.write("mean_error", r.mean_error, {R, J, S});
  g.write("w2_sup", s.w2_sup, {R, J});
  g.write("w2_final", s.w2_final, {R, J});
  g.write("mmd2_sup", s.mmd2_sup, {R, J});
  g.write("energy_error_sup", s.energy_sup, {R, J});
  g.write("mean_error_sup", s.mean_sup, {R, J});
}

}  // namespace tokdyn
