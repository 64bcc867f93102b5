#include "tokdyn/studies/mlmc_study.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "tokdyn/core/console/progress.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"

namespace tokdyn {
namespace {

// What /mlmc holds (io/outputs.hpp): declared here, beside the code that writes it. Giles' mlmc.test table: one
// row per level.
constexpr OutputDecl kMlmcOutputs[] = {
    {"mlmc/consistency", OutputType::real, "observable", "level",
     "|E[P_{l-1}] from level l's coarse paths - E[P_{l-1}] from level l-1's fine paths|, the check that both have one "
     "law (0 at level 0 and for plain Monte Carlo)."},
    {"mlmc/consistency_ratio", OutputType::real, "1", "level",
     "consistency over a bound on its standard error, sqrt(var_y / N_l) + sqrt(var_p(l) / N_l) + sqrt(var_p(l-1) / "
     "N_{l-1}): above 3, the coarse and fine paths of adjacent levels do not agree (the summary says so)."},
    {"mlmc/cost", OutputType::real, "steps", "level",
     "Modelled cost of one sample: the steps of its paths, each weighted by the work of a step on its n tokens, "
     "n (n + M + 1) (n without attention), relative to model.N's; for levels in depth L_a + L_{a-1} (L_0 at level "
     "0). The plan N_l uses it, so a run's samples do not depend on the machine."},
    {"mlmc/kurtosis", OutputType::real, "1", "level",
     "Kurtosis E[(Y - E Y)^4] / Var(Y)^2 of the samples of Y_l: large values make the variance estimate unreliable."},
    {"mlmc/layers", OutputType::real, "layers", "level", "Depth L_a = mlmc.L0 2^a of the row's fine paths."},
    {"mlmc/level", OutputType::real, "1", "level",
     "The depth index a of each row (the level l of levels in depth; 0 for levels in tokens; plain Monte Carlo: the "
     "index it samples)."},
    {"mlmc/token_level", OutputType::real, "1", "level",
     "The token index b of each row: N_b = model.N 2^b tokens (0 for levels in depth)."},
    {"mlmc/tokens", OutputType::real, "count", "level", "Tokens N_b of the row's fine system."},
    {"mlmc/mean_p", OutputType::real, "observable", "level", "Mean of the fine paths' P_l = phi(X_T) over the samples."},
    {"mlmc/mean_y", OutputType::real, "observable", "level",
     "Mean of Y_l = P_l - P_{l-1} (Y_0 = P_0) over the level's samples: the estimate is their sum over the levels."},
    {"mlmc/samples", OutputType::real, "1", "level", "Samples N_l taken on the level."},
    {"mlmc/seconds", OutputType::real, "seconds", "level",
     "Measured wall time per sample of the level, summed over the ranks that drew them (a timing)."},
    {"mlmc/seconds@timing", OutputType::integer, "1", "",
     "1: the dataset is a timing (wall-clock seconds), one of the only values two runs of one deck do not share."},
    {"mlmc/var_p", OutputType::real, "observable^2", "level", "Sample variance of P_l."},
    {"mlmc/var_y", OutputType::real, "observable^2", "level", "Sample variance V_l of Y_l."},
    {"mlmc@alpha", OutputType::real, "1", "",
     "Fitted weak rate: least-squares slope of -log2 |mean_y| over levels 1..L (|E Y_l| ~ 2^{-alpha l}); multi-index: "
     "along the depth axis (b = 0)."},
    {"mlmc@alpha_error", OutputType::real, "1", "", "Standard error of alpha (NaN with fewer than three points)."},
    {"mlmc@alpha_predicted", OutputType::real, "1", "",
     "The weak rate predicted: 1, the O(1/L) weak error of the layers against the limit SDE (doc/science.md section "
     "6.1), and the O(1/N) of the token count (section 11.6)."},
    {"mlmc@beta", OutputType::real, "1", "", "Fitted variance rate: slope of -log2 var_y over levels 1..L."},
    {"mlmc@beta_error", OutputType::real, "1", "", "Standard error of beta."},
    {"mlmc@beta_predicted", OutputType::real, "1", "",
     "The variance rate predicted: 1 in depth (the strong order 1/2 of the schemes; 0 at a finite width, whose level "
     "variances fall to a floor of order 1/m), 2 in tokens (the antithetic "
     "halves, section 11.6)."},
    {"mlmc@bias", OutputType::real, "observable", "",
     "Estimated weak error of the finest level: the last levels' |E Y_l| extrapolated with alpha (0 for plain Monte "
     "Carlo, which does not estimate it)."},
    {"mlmc@converged", OutputType::integer, "1", "",
     "1: the bias estimate is within sqrt(theta) eps and the sampling variance within (1 - theta) eps^2 (plain Monte "
     "Carlo: the variance alone); 0: mlmc.max_levels was reached first."},
    {"mlmc@eps", OutputType::real, "observable", "", "The target root-mean-square error (mlmc.eps)."},
    {"mlmc@estimate", OutputType::real, "observable", "", "The estimate of E[phi(X_T)]: the sum over levels of mean_y."},
    {"mlmc@gamma", OutputType::real, "1", "", "Cost rate of the modelled cost over levels 1..L (1 by construction)."},
    {"mlmc@gamma_error", OutputType::real, "1", "", "Standard error of gamma."},
    {"mlmc@gamma_seconds", OutputType::real, "1", "", "Cost rate fitted to the measured seconds per sample."},
    {"mlmc@method", OutputType::text, "", "", "mlmc (the adaptive drivers) or mc (plain Monte Carlo)."},
    {"mlmc@levels", OutputType::text, "", "",
     "mlmc.levels: depth (L_a = L0 2^a), tokens (N_b = N0 2^b, antithetic halves) or both (multi-index)."},
    {"mlmc@index_set", OutputType::text, "", "", "mlmc.index_set of a multi-index run: total (a + b <= ell) or box."},
    {"mlmc@tokens_alpha", OutputType::real, "1", "",
     "Multi-index runs: the weak rate fitted along the token axis (a = 0); NaN otherwise."},
    {"mlmc@tokens_alpha_error", OutputType::real, "1", "", "Standard error of tokens_alpha."},
    {"mlmc@tokens_beta", OutputType::real, "1", "",
     "Multi-index runs: the variance rate fitted along the token axis (a = 0); NaN otherwise."},
    {"mlmc@tokens_beta_error", OutputType::real, "1", "", "Standard error of tokens_beta."},
    {"mlmc@mc_seconds", OutputType::real, "seconds", "",
     "What plain Monte Carlo at the finest level would take for the same sampling variance: var_p(L) times the "
     "measured seconds of one fine path of level L (a level-L sample's seconds times its fine path's share of its "
     "cost) over (1 - theta) eps^2 (0 for a multi-index run)."},
    {"mlmc@mc_work", OutputType::real, "steps", "",
     "The same in modelled steps: var_p(L) times the finest index's fine path's cost over (1 - theta) eps^2 (0 for a "
     "multi-index run, whose finest depth and token count are not one index)."},
    {"mlmc@observable", OutputType::text, "", "", "The observable phi (mlmc.observable)."},
    {"mlmc@scheme", OutputType::text, "", "", "The scheme of every path (mlmc.scheme; unused at a finite width)."},
    {"mlmc@seconds", OutputType::real, "seconds", "", "Measured wall time of all samples, summed over ranks."},
    {"mlmc@standard_error", OutputType::real, "observable", "", "sqrt(sum_l var_y / N_l), the sampling error."},
    {"mlmc@theta", OutputType::real, "1", "", "The share of eps^2 allowed to the squared bias (mlmc.theta)."},
    {"mlmc@width", OutputType::integer, "1", "",
     "mlp.width: the MLP width m of every layer's transformer, or 0 for the infinite-width layer (the scheme)."},
    {"mlmc@work", OutputType::real, "steps", "", "The modelled work of the run: sum_l N_l cost_l."},
    {"mlmc@work_ratio", OutputType::real, "1", "", "mc_work / work: what the levels saved, in the model (0: multi-index)."},
};
const DeclaredOutputs kMlmcDeclared("mlmc", kMlmcOutputs);

Estimate interval(const RateFit& f) { return {f.rate, f.rate - 1.96 * f.error, f.rate + 1.96 * f.error}; }

}  // namespace

// The run: batch after batch of one level's samples, spread over the ranks (sample first + i on rank i mod P); every
// rank gets every sample's values and adds them in sample order, so the sums, hence the plan and the estimate, do not
// depend on the number of ranks.
class MlmcRun final : public RunState {
 public:
  MlmcRun(const Comm& comm, const MlmcStudyParams& p) : comm_(comm), p_(p), levels_(p.levels) {
    if (p.family == LevelFamily::both && !p.options.plain)
      driver_ = std::make_unique<MimcDriver>(p.index_options);
    else
      driver_ = std::make_unique<MlmcDriver>(p.options);
  }

  std::int64_t steps() const override { return kOpenEnded; }
  std::int64_t planned_steps() const override {
    if (driver_->complete()) return rounds_;
    std::int64_t more = 0;
    for (std::int64_t n : driver_->pending()) more += (n + p_.batch - 1) / p_.batch;
    return rounds_ + std::max<std::int64_t>(more, 1);
  }
  std::string unit() const override { return "round"; }  // a batch of samples
  void start() override { draw_ = driver_->next(p_.batch); }
  void begin(RunFile& file) override {}
  std::int64_t advance(std::int64_t step) override;
  std::string observe(std::int64_t step, RunFile& file) override { return ""; }
  std::string record_line() const override { return line_; }
  bool finite() const override { return bad_.empty(); }
  std::string nonfinite_message(std::int64_t step) const override { return bad_; }
  void save(CheckpointWriter& out) const override {
    out.values("mlmc_state", driver_->save());
    out.attribute("mlmc_rounds", rounds_);
  }
  void restore(const CheckpointReader& in, RunFile& file) override {
    driver_->restore(in.values("mlmc_state"));
    rounds_ = in.int_attribute("mlmc_rounds");
    draw_ = driver_->next(p_.batch);
  }
  void finish(RunFile& file) override;
  double work_per_step() const override { return static_cast<double>(p_.batch); }
  std::string work_unit() const override { return "samples"; }
  std::vector<std::string> summary() const override { return summary_; }
  double state_bytes() const override { return 8.0 * 12 * (p_.options.max_levels + 2) * (p_.options.max_levels + 2); }

 private:
  // The index (a, b) of the driver's level k, and the directions its differences take.
  LevelIndex index(int k) const;
  LevelDirections along() const;
  std::string index_text(const LevelIndex& i) const;

  const Comm& comm_;
  MlmcStudyParams p_;
  CoupledLevels levels_;
  std::unique_ptr<LevelDriver> driver_;
  LevelDriver::Draw draw_;
  std::int64_t rounds_ = 0;
  std::string line_, bad_;
  std::vector<std::string> summary_;
};

LevelIndex MlmcRun::index(int k) const {
  const int top = p_.options.max_levels;
  switch (p_.family) {
    case LevelFamily::depth: return p_.options.plain ? LevelIndex{top, 0} : LevelIndex{k, 0};
    case LevelFamily::tokens: return p_.options.plain ? LevelIndex{0, top} : LevelIndex{0, k};
    case LevelFamily::both: break;
  }
  return p_.options.plain ? LevelIndex{top, top} : static_cast<const MimcDriver&>(*driver_).indices()[k];
}

LevelDirections MlmcRun::along() const {
  if (p_.options.plain) return {false, false};
  return {p_.family != LevelFamily::tokens, p_.family != LevelFamily::depth};
}

std::string MlmcRun::index_text(const LevelIndex& i) const {
  return "L = " + std::to_string(levels_.layers(i.depth)) + ", N = " + std::to_string(levels_.tokens(i.tokens));
}

std::int64_t MlmcRun::advance(std::int64_t step) {
  const LevelDriver::Draw d = draw_;
  const LevelIndex i = index(d.level);
  const int P = comm_.size();
  // [count, 3]: fine, coarse, seconds; zero where another rank draws the sample, so the sum is exact.
  std::vector<double> v(3 * static_cast<std::size_t>(d.count), 0.0);
  for (std::int64_t k = comm_.rank(); k < d.count; k += P) {
    const double t0 = MPI_Wtime();
    levels_.sample(i, along(), d.first + k, v[3 * k], v[3 * k + 1]);
    v[3 * k + 2] = MPI_Wtime() - t0;
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, comm_.get()));
  LevelSums drawn;
  for (std::int64_t k = 0; k < d.count; ++k) {
    if (!std::isfinite(v[3 * k]) || !std::isfinite(v[3 * k + 1])) {
      bad_ = "NaN or Inf in sample " + std::to_string(d.first + k) + " at " + index_text(i) +
             ": reduce model.T, attention.beta or the weight scales";
      return step + 1;
    }
    drawn.add(d.level, v[3 * k], v[3 * k + 1]);
    drawn.seconds += v[3 * k + 2];
  }
  drawn.cost = static_cast<double>(d.count) * levels_.cost(i, along());
  driver_->add(d, drawn);
  rounds_ = step + 1;
  const LevelSums& s = driver_->levels()[d.level];
  char line[256];
  std::snprintf(line, sizeof line, "round %lld: %s, %lld samples, %lld more planned; mean Y %.6g, var Y %.3g",
                static_cast<long long>(rounds_), index_text(i).c_str(), static_cast<long long>(s.n),
                static_cast<long long>(driver_->pending()[d.level]), s.mean_y(), s.var_y());
  line_ = line;
  draw_ = driver_->next(p_.batch);
  return step + 1;
}

void MlmcRun::finish(RunFile& file) {
  const MlmcResult r = driver_->result();
  const bool plain = p_.options.plain, one_axis = p_.family != LevelFamily::both || plain;
  const std::size_t J = r.levels.size();
  std::vector<double> level(J), token_level(J), layers(J), tokens(J), samples(J), mean_y(J), var_y(J), mean_p(J),
      var_p(J), kurtosis(J), consistency(J, 0.0), ratio(J, 0.0), cost(J), seconds(J), per_second(J);
  double total_seconds = 0;
  for (std::size_t l = 0; l < J; ++l) {
    const LevelSums& s = r.levels[l];
    const LevelIndex i = index(static_cast<int>(l));
    const double n = static_cast<double>(s.n);
    level[l] = i.depth, token_level[l] = i.tokens, samples[l] = n;
    layers[l] = static_cast<double>(levels_.layers(i.depth)), tokens[l] = static_cast<double>(levels_.tokens(i.tokens));
    mean_y[l] = s.mean_y(), var_y[l] = s.var_y(), mean_p[l] = s.mean_p(), var_p[l] = s.var_p();
    kurtosis[l] = s.kurtosis_y(), cost[l] = levels_.cost(i, along());
    seconds[l] = n > 0 ? s.seconds / n : 0, per_second[l] = seconds[l] > 0 ? 1 / seconds[l] : 0;
    total_seconds += s.seconds;
    if (l > 0 && one_axis) {
      const LevelSums& c = r.levels[l - 1];
      consistency[l] = std::abs(s.mean_p() - s.mean_y() - c.mean_p());
      const double se = std::sqrt(s.var_y() / n) + std::sqrt(s.var_p() / n) + std::sqrt(c.var_p() / static_cast<double>(c.n));
      ratio[l] = se > 0 ? consistency[l] / se : 0;
    }
  }
  char text[512];
  comm_.print("  a   b       L       N       N_l    mean Y        var Y        mean P       var P        kurt.   check "
              "    cost  s/sample");
  for (std::size_t l = 0; l < J; ++l) {
    std::snprintf(text, sizeof text, "%3.0f %3.0f %7.0f %7.0f %9.0f  %+.4e  %.4e  %+.4e  %.4e  %6.2f  %5.2f%s %8.4g  %.2e",
                  level[l], token_level[l], layers[l], tokens[l], samples[l], mean_y[l], var_y[l], mean_p[l], var_p[l],
                  kurtosis[l], ratio[l], ratio[l] > 3 ? "!" : " ", cost[l], seconds[l]);
    comm_.print(text);
  }
  const RateFit gamma_seconds = fit_rate(per_second, 1);
  const std::size_t L = J - 1;
  const double target = (1 - p_.options.theta) * p_.options.eps * p_.options.eps;
  // Plain Monte Carlo at the finest index of a one-axis run: its fine path alone, var_p(L) samples over the target.
  const double fine_cost = levels_.cost(index(static_cast<int>(L)), {false, false});
  const double mc_work = one_axis ? var_p[L] * fine_cost / target : 0.0;
  const double mc_seconds = one_axis ? var_p[L] * seconds[L] * fine_cost / cost[L] / target : 0.0;
  // At a finite width the depth levels' variances fall to a floor of order 1/m (doc/science.md section 11.5): rate 0.
  const bool floor = p_.family == LevelFamily::depth && p_.levels.mlp.width > 0 && p_.levels.noise;
  const double alpha_predicted = 1, beta_predicted = p_.family == LevelFamily::tokens ? 2 : floor ? 0 : 1;
  if (!plain && J >= 3) {
    const char* axis = p_.family == LevelFamily::tokens ? "in N" : "in L";
    const std::string a = against_prediction(interval(r.alpha), alpha_predicted),
                      b = against_prediction(interval(r.beta), beta_predicted);
    std::snprintf(text, sizeof text,
                  "%s: alpha = %.3f +- %.3f (predicted %g)%s; beta = %.3f +- %.3f (predicted %g%s)%s; gamma = %.3f "
                  "(model), %.3f (measured seconds)",
                  one_axis ? axis : "along the depth axis (b = 0)", r.alpha.rate, r.alpha.error,
                  alpha_predicted, a.c_str(), r.beta.rate, r.beta.error, beta_predicted,
                  floor ? ": the variances' floor of order 1/m" : "", b.c_str(), r.gamma.rate, gamma_seconds.rate);
    comm_.print(text);
    if (!one_axis) {
      const auto& m = static_cast<const MimcDriver&>(*driver_);
      const RateFit ta = m.tokens_alpha(), tb = m.tokens_beta();
      std::snprintf(text, sizeof text, "along the token axis (a = 0): alpha = %.3f +- %.3f (predicted 1)%s; beta = %.3f +- "
                    "%.3f (predicted 2)%s", ta.rate, ta.error, against_prediction(interval(ta), 1.0).c_str(), tb.rate,
                    tb.error, against_prediction(interval(tb), 2.0).c_str());
      comm_.print(text);
    }
  }
  for (std::size_t l = 1; l < J; ++l)
    if (ratio[l] > 3)
      comm_.print("consistency check fails at " + index_text(index(static_cast<int>(l))) + ": the coarse paths' mean is " +
                  std::to_string(ratio[l]) +
                  " standard errors from the level below's fine paths' (a coupling whose coarse law is wrong)");
  const std::string name = p_.levels.observable + "(X_T)";
  const std::string reached =
      plain ? index_text(index(0))
            : (p_.family == LevelFamily::both ? "index set level " + std::to_string(static_cast<const MimcDriver&>(*driver_).level()) +
                                                    " (" + std::to_string(J) + " indices), finest "
                                              : "levels 0.." + std::to_string(L) + ", finest ") +
                  index_text({static_cast<int>(*std::max_element(level.begin(), level.end())),
                              static_cast<int>(*std::max_element(token_level.begin(), token_level.end()))});
  std::snprintf(text, sizeof text, "E[%s] = %.6g +- %.2g (%s, eps = %g%s): %s, work %.4g steps", name.c_str(), r.estimate,
                r.standard_error, plain ? "plain Monte Carlo" : ("bias estimate " + std::to_string(r.bias)).c_str(),
                p_.options.eps, r.converged ? "" : ", NOT converged: mlmc.max_levels reached", reached.c_str(), r.work);
  summary_.push_back(text);
  if (!plain && one_axis) {
    std::snprintf(text, sizeof text,
                  "plain Monte Carlo at %s for the same sampling variance: %.4g steps (%.1fx the work), %s (%.1fx the "
                  "%s measured)",
                  index_text(index(static_cast<int>(L))).c_str(), mc_work, mc_work / r.work,
                  format_seconds(mc_seconds).c_str(), total_seconds > 0 ? mc_seconds / total_seconds : 0.0,
                  format_seconds(total_seconds).c_str());
    summary_.push_back(text);
  }

  RunGroup g = file.group("mlmc");
  g.write("level", level);
  g.write("token_level", token_level);
  g.write("layers", layers);
  g.write("tokens", tokens);
  g.write("samples", samples);
  g.write("mean_y", mean_y);
  g.write("var_y", var_y);
  g.write("mean_p", mean_p);
  g.write("var_p", var_p);
  g.write("kurtosis", kurtosis);
  g.write("consistency", consistency);
  g.write("consistency_ratio", ratio);
  g.write("cost", cost);
  g.write("seconds", seconds);
  g.attribute("seconds@timing", std::int64_t(1));
  g.attribute("method", std::string(plain ? "mc" : "mlmc"));
  g.attribute("levels", std::string(p_.family == LevelFamily::depth ? "depth" : p_.family == LevelFamily::tokens ? "tokens" : "both"));
  g.attribute("index_set", std::string(p_.index_options.total_degree ? "total" : "box"));
  g.attribute("observable", p_.levels.observable);
  g.attribute("scheme", p_.levels.scheme);
  g.attribute("width", p_.levels.mlp.width);
  g.attribute("estimate", r.estimate);
  g.attribute("standard_error", r.standard_error);
  g.attribute("bias", r.bias);
  g.attribute("eps", p_.options.eps);
  g.attribute("theta", p_.options.theta);
  g.attribute("converged", std::int64_t(r.converged ? 1 : 0));
  g.attribute("alpha", r.alpha.rate);
  g.attribute("alpha_error", r.alpha.error);
  g.attribute("alpha_predicted", alpha_predicted);
  g.attribute("beta", r.beta.rate);
  g.attribute("beta_error", r.beta.error);
  g.attribute("beta_predicted", beta_predicted);
  g.attribute("gamma", r.gamma.rate);
  g.attribute("gamma_error", r.gamma.error);
  g.attribute("gamma_seconds", gamma_seconds.rate);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const RateFit ta = one_axis ? RateFit{nan, nan} : static_cast<const MimcDriver&>(*driver_).tokens_alpha(),
                tb = one_axis ? RateFit{nan, nan} : static_cast<const MimcDriver&>(*driver_).tokens_beta();
  g.attribute("tokens_alpha", ta.rate);
  g.attribute("tokens_alpha_error", ta.error);
  g.attribute("tokens_beta", tb.rate);
  g.attribute("tokens_beta_error", tb.error);
  g.attribute("work", r.work);
  g.attribute("mc_work", mc_work);
  g.attribute("work_ratio", one_axis ? mc_work / r.work : 0.0);
  g.attribute("seconds", total_seconds);
  g.attribute("mc_seconds", mc_seconds);
}

DeckSchema MlmcStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "mlmc.h5");
  add_tile_key(s);
  add_model_keys(s, {true, 16, 3, 4, 1.0, "dimension d (tokens on S^{d-1})",
                     "unused: the levels set the depth, L_l = mlmc.L0 2^l"});
  add_attention_keys(s);
  add_kernel_keys(s);
  add_field_keys(s);
  add_token_keys(s);
  s.add_bool("noise.enabled", true, "apply the common noise (off: the attention flow alone, a deterministic check)");
  s.add_int("mlp.width", 0,
            "MLP width m of every layer: the width-m transformer, its depth levels coupled through the fields' "
            "covariances (doc/science.md section 11.5); 0: the infinite-width layer, the Gaussian field noise.* "
            "through mlmc.scheme",
            0, 1 << 20);
  s.add_choice("mlmc.method", "mlmc", {"mlmc", "mc"},
               "mlmc: the adaptive drivers; mc: plain Monte Carlo at the finest index: depth L0 2^max_levels (levels "
               "= depth), N 2^max_levels tokens (tokens), both (both)");
  s.add_choice("mlmc.levels", "depth", {"depth", "tokens", "both"},
               "the levels: depth L0 2^l (Giles), token count N 2^l by antithetic halves (Giles; fresh tokens), or both "
               "(multi-index; fresh tokens)");
  s.add_choice("mlmc.index_set", "total", {"total", "box"},
               "levels = both: the index set of level ell, total degree a + b <= ell or the box a, b <= ell");
  s.add_choice("mlmc.observable", "order2", token_observables().names(), "phi(X_T), whose expectation is estimated");
  s.add_choice("mlmc.scheme", "projected", sde_schemes().names(),
               "the scheme of every path (projected: the transformer layer with the Gaussian field)");
  s.add_real("mlmc.eps", 1e-2, "target root-mean-square error of the estimate (in the observable's units)", 0.0,
             std::numeric_limits<double>::infinity(), true);
  s.add_int("mlmc.L0", 4, "depth of level 0; level l has L0 2^l layers (levels in tokens: the depth of every level)", 1, std::int64_t(1) << 30);
  s.add_int("mlmc.min_levels", 2, "start with levels 0 .. min_levels (the bias estimate needs three; both: the "
            "index set's level ell)", 2, 30);
  s.add_int("mlmc.max_levels", 8, "at most levels 0 .. max_levels (both: ell); mc: the level it samples", 1, 30);
  s.add_int("mlmc.initial_samples", 100, "samples of each new level before its variance is trusted", 2,
            std::int64_t(1) << 40);
  s.add_real("mlmc.theta", 0.5, "share of eps^2 given to the squared bias; the sampling variance gets the rest", 0.0,
             1.0, true);
  s.add_real("mlmc.alpha", 0.0, "weak rate |E Y_l| ~ 2^{-alpha l} (0: fitted)", 0.0);
  s.add_real("mlmc.beta", 0.0, "variance rate V_l ~ 2^{-beta l} (0: fitted)", 0.0);
  s.add_real("mlmc.gamma", 0.0, "cost rate C_l ~ 2^{gamma l} (0: the modelled cost, L_l + L_{l-1} steps)", 0.0);
  s.add_int("mlmc.batch", 64, "samples per round of the run (checkpoints fall between rounds)", 1, 1 << 24);
  s.add_bool("mlmc.fresh_tokens", false,
             "draw fresh uniform tokens for every sample (false: every sample starts from the tokens.* tokens)");
  return s;
}

MlmcStudy::MlmcStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), tokens_(token_source_from_deck(deck)), attention_weights_(attention_spec_from_deck(deck).weights) {
  LevelSetup& s = params_.levels;
  s.n = deck.get_int("model.N");
  s.d = static_cast<int>(deck.get_int("model.d"));
  s.horizon = deck.get_real("model.T");
  s.factor = deck.get_bool("attention.enabled") ? deck.get_real("attention.factor") : 0.0;
  s.attention_style = deck.get_text("attention.style");
  s.tile = static_cast<int>(deck.get_int("run.tile"));
  s.noise = deck.get_bool("noise.enabled");
  s.field_name = deck.get_text("noise.field");
  s.field = field_params_from_deck(deck, s.d);
  s.scheme = deck.get_text("mlmc.scheme");
  s.mlp = mlp_params_from_deck(deck);
  s.coarsest = deck.get_int("mlmc.L0");
  s.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  s.observable = deck.get_text("mlmc.observable");
  s.beta = deck.get_real("attention.beta");
  params_.fresh_tokens = deck.get_bool("mlmc.fresh_tokens");
  MlmcOptions& o = params_.options;
  o.plain = deck.get_text("mlmc.method") == "mc";
  o.eps = deck.get_real("mlmc.eps");
  o.min_levels = static_cast<int>(deck.get_int("mlmc.min_levels"));
  o.max_levels = static_cast<int>(deck.get_int("mlmc.max_levels"));
  o.initial_samples = deck.get_int("mlmc.initial_samples");
  o.theta = deck.get_real("mlmc.theta");
  o.alpha = deck.get_real("mlmc.alpha");
  o.beta = deck.get_real("mlmc.beta");
  o.gamma = deck.get_real("mlmc.gamma");
  params_.batch = deck.get_int("mlmc.batch");
  const std::string family = deck.get_text("mlmc.levels");
  params_.family = family == "depth" ? LevelFamily::depth : family == "tokens" ? LevelFamily::tokens : LevelFamily::both;
  MimcOptions& m = params_.index_options;
  m.eps = o.eps, m.theta = o.theta, m.initial_samples = o.initial_samples;
  m.total_degree = deck.get_text("mlmc.index_set") == "total";
  m.min_level = o.min_levels, m.max_level = o.max_levels;
  if (params_.family != LevelFamily::depth && !params_.fresh_tokens)
    throw InputError("deck key 'mlmc.levels' = '" + family +
                     "': levels in the token count draw fresh tokens for every sample: set mlmc.fresh_tokens = true");
  if (s.mlp.width > 0 && params_.family == LevelFamily::both)
    throw InputError("deck key 'mlp.width' = '" + deck.get_text("mlp.width") +
                     "': the multi-index levels need the infinite-width field (mlp.width = 0); at a finite width the "
                     "levels take one direction, mlmc.levels = depth or tokens");
  if (!o.plain && o.max_levels < o.min_levels)
    throw InputError("deck key 'mlmc.max_levels' = '" + deck.get_text("mlmc.max_levels") + "': below mlmc.min_levels = " +
                     deck.get_text("mlmc.min_levels"));
  if (params_.family != LevelFamily::tokens && static_cast<double>(s.coarsest) * std::ldexp(1.0, o.max_levels) > std::ldexp(1.0, 40))
    throw InputError("deck key 'mlmc.max_levels' = '" + deck.get_text("mlmc.max_levels") + "': L0 2^max_levels above 2^40 layers");
  if (tokens_.init == "file" && params_.fresh_tokens)
    throw InputError("deck key 'mlmc.fresh_tokens' = 'true': tokens.init = file gives every sample the file's tokens");
  if (params_.family != LevelFamily::depth && static_cast<double>(s.n) * std::ldexp(1.0, o.max_levels) > std::ldexp(1.0, 30))
    throw InputError("deck key 'mlmc.max_levels' = '" + deck.get_text("mlmc.max_levels") +
                     "': model.N 2^max_levels above 2^30 tokens");
  // The options' own errors now, before any file is written.
  if (params_.family == LevelFamily::both && !o.plain)
    MimcDriver check(m);
  else
    MlmcDriver check(o);
}

MlmcStudy::~MlmcStudy() = default;

MemoryEstimate MlmcStudy::memory() const {
  const LevelSetup& s = params_.levels;
  const MlmcOptions& o = params_.options;
  // The largest system a sample integrates: N 2^max_levels tokens when the token count has levels.
  const double n = static_cast<double>(s.n) * (params_.family == LevelFamily::depth ? 1.0 : std::ldexp(1.0, o.max_levels));
  const double nd = n * s.d, M = static_cast<double>(s.field.features);
  MemoryEstimate memory;
  memory.add("a sample's largest system: tokens and scheme buffers [N, d] x 8", 8 * nd);
  if (s.mlp.width == 0)
    memory.add("the random features [M, d + 1] and their values [min(N, 256), M]",
               M * (s.d + 1) + std::min<double>(n, 256) * M + 2 * M * s.d);
  memory.add("a batch's sample values [batch, 3]", 3 * static_cast<double>(params_.batch));
  if (s.mlp.width > 0) {
    const double m = static_cast<double>(s.mlp.width);
    memory.add("a layer's MLP: U, W [m, d] and its hidden values [N, m]", 2 * m * s.d + n * m);
    if (params_.family == LevelFamily::depth)
      memory.add("the depth levels' field covariance and its root [N, N]", 2 * n * n);
  }
  return memory;
}

RunState& MlmcStudy::setup() {
  LevelSetup& s = params_.levels;
  s.weights = make_attention_weights(attention_weights_, s.d, comm_.get());
  if (!params_.fresh_tokens) {
    // Every sample starts from these tokens: each rank holds all N of them.
    const Comm self(MPI_COMM_SELF);
    initial_tokens(tokens_, self, Partition(s.n, 1), s.d, s.tokens);
  }
  state_ = std::make_unique<MlmcRun>(comm_, params_);
  return *state_;
}

std::string MlmcStudy::banner() const {
  const LevelSetup& s = params_.levels;
  const MlmcOptions& o = params_.options;
  const int top = o.max_levels;
  const long long L0 = static_cast<long long>(s.coarsest), N0 = static_cast<long long>(s.n);
  char line[512];
  if (o.plain) {
    const bool deep = params_.family != LevelFamily::tokens, many = params_.family != LevelFamily::depth;
    std::snprintf(line, sizeof line, "tokdyn mlmc: plain Monte Carlo of E[%s(X_T)] to eps = %g at L = %lld, N = %lld",
                  s.observable.c_str(), o.eps, deep ? L0 << top : L0, many ? N0 << top : N0);
  } else if (params_.family == LevelFamily::depth) {
    std::snprintf(line, sizeof line, "tokdyn mlmc: E[%s(X_T)] to eps = %g over depth L = %lld 2^l, levels 0..%d to 0..%d, N = %lld",
                  s.observable.c_str(), o.eps, L0, o.min_levels, top, N0);
  } else if (params_.family == LevelFamily::tokens) {
    std::snprintf(line, sizeof line,
                  "tokdyn mlmc: E[%s(X_T)] to eps = %g over tokens N = %lld 2^l (antithetic halves), levels 0..%d to 0..%d, L = %lld",
                  s.observable.c_str(), o.eps, N0, o.min_levels, top, L0);
  } else {
    std::snprintf(line, sizeof line,
                  "tokdyn mlmc: E[%s(X_T)] to eps = %g by multi-index over L = %lld 2^a and N = %lld 2^b, %s sets of level "
                  "%d to %d",
                  s.observable.c_str(), o.eps, L0, N0, params_.index_options.total_degree ? "total-degree" : "box",
                  o.min_levels, top);
  }
  std::string text = line;
  const std::string model = s.mlp.width > 0
                                ? "the width-" + std::to_string(s.mlp.width) + " transformer"
                                : s.scheme + " scheme, " + s.field_name + " field";
  std::snprintf(line, sizeof line, "; d = %d, T = %g, %s%s, %s tokens, batches of %lld", s.d, s.horizon, model.c_str(),
                s.noise ? "" : " (noise off)", params_.fresh_tokens ? "fresh" : tokens_.init == "file" ? "the file's" : "fixed",
                static_cast<long long>(params_.batch));
  return text + line;
}

std::string MlmcStudy::plan() const {
  const MlmcOptions& o = params_.options;
  char line[256];
  std::snprintf(line, sizeof line,
                "adaptive: %lld samples of each %s first, then as many as the variances ask; the finest allowed: %s %d",
                static_cast<long long>(o.initial_samples),
                o.plain ? "(one index)" : params_.family == LevelFamily::both ? "index of the first set" : "of levels 0..min_levels",
                params_.family == LevelFamily::both ? "index-set level" : "level", o.max_levels);
  return line;
}

}  // namespace tokdyn
