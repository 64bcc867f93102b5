// Multilevel Monte Carlo (doc/science.md section 11): E[P] for P the observable of a discretisation at level L,
// written as the telescoping sum E[P_0] + sum_{l=1..L} E[P_l - P_{l-1}], each term estimated by its own samples.
// A caller's LevelSampler draws Y_l = P_l - P_{l-1} (Y_0 = P_0) with the fine and the coarse path built from one
// draw of the noise; the driver (Giles' adaptive algorithm) decides how many samples each level takes and when a
// level is added, from the levels' measured means, variances and costs.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace tokdyn {

// Sums over the samples of one level: of Y = P_l - P_{l-1} (Y = P_0 at level 0) and of the fine P_l alone, kept
// apart so that the consistency check E[Y_l] = E[P_l] - E[P_{l-1}] can be made (it fails for a coupling whose
// coarse path does not have the law of level l - 1's fine path).
struct LevelSums {
  std::int64_t n = 0;
  double y[4] = {0, 0, 0, 0};  // sums of Y, Y^2, Y^3, Y^4
  double p[2] = {0, 0};        // sums of P_l, P_l^2
  double cost = 0;             // the work these samples took (the sampler's unit): what the plan uses
  double seconds = 0;          // their measured wall time, reported beside the cost (never planned with)

  // One sample: fine = P_l, coarse = P_{l-1} (ignored at level 0).
  void add(int level, double fine, double coarse);
  void merge(const LevelSums& other);
  double mean_y() const { return n > 0 ? y[0] / static_cast<double>(n) : 0.0; }
  double var_y() const;  // the sample variance (n - 1)
  double mean_p() const { return n > 0 ? p[0] / static_cast<double>(n) : 0.0; }
  double var_p() const;
  double kurtosis_y() const;  // E[(Y - mean)^4] / var^2 of the samples (large: the variance estimate is unreliable)
  double cost_per_sample() const { return n > 0 ? cost / static_cast<double>(n) : 0.0; }
};

// Adds `count` samples of level `level` to `sums`, numbered first .. first + count - 1: a sample's noise is keyed by
// (level, its number), so a level's samples are the same however the driver batches them.
using LevelSampler = std::function<void(int level, std::int64_t first, std::int64_t count, LevelSums& sums)>;

struct MlmcOptions {
  double eps = 1e-2;                    // target root-mean-square error of the estimate
  int min_levels = 2;                   // levels 0 .. min_levels at least (the bias needs three to extrapolate)
  int max_levels = 10;                  // levels 0 .. max_levels at most
  std::int64_t initial_samples = 100;   // the first samples of each new level
  double alpha = 0, beta = 0, gamma = 0;  // |E Y_l| ~ 2^{-alpha l}, V_l ~ 2^{-beta l}, C_l ~ 2^{gamma l}: 0 = fitted
  double theta = 0.5;  // the share of eps^2 allowed to the bias^2; the sampling variance gets (1 - theta) eps^2
  bool plain = false;  // plain Monte Carlo: level 0 alone (the caller's finest depth), no bias control
};

// A rate r of values ~ 2^{-r l}: the least-squares slope of -log2 |values[l]| over l = from .. (diagnostics/fit's
// fitted_slope), with its standard error (NaN with two points; both NaN with fewer).
struct RateFit {
  double rate = 0, error = 0;  // the slope and its standard error
};
RateFit fit_rate(const std::vector<double>& values, int from);

struct MlmcResult {
  double estimate = 0;  // sum_l mean Y_l
  double standard_error = 0;  // sqrt(sum_l V_l / N_l)
  double bias = 0;      // the weak error of the finest level, extrapolated from the last levels' |E Y_l| and alpha
  std::vector<LevelSums> levels;
  RateFit alpha, beta, gamma;  // fitted over levels 1 .. (the options' values, when given, are what was used)
  double alpha_used = 0, beta_used = 0, gamma_used = 0;
  double work = 0;     // sum_l N_l C_l: what the samples cost
  double mc_work = 0;  // plain Monte Carlo of P_L for the same sampling variance: V[P_L] C_L / ((1 - theta) eps^2)
  bool converged = false;  // the bias within sqrt(theta) eps (false: max_levels was reached first)
};

// What the adaptive drivers share: levels (or indices) with their sums and the samples each still lacks. The
// caller asks next() what to draw, draws it and hands it to add(), until next() says the run is complete; the
// driver's update() decides, once nothing is pending, whether to plan more samples, add levels or end.
class LevelDriver {
 public:
  virtual ~LevelDriver() = default;

  // The samples to draw now: `count` (at most `batch`) of level `level` (a position in levels()), numbered
  // first .. first + count - 1; count 0 once the run is complete.
  struct Draw {
    int level = 0;
    std::int64_t first = 0, count = 0;
  };
  Draw next(std::int64_t batch);
  // The samples of the last next(): `drawn` must hold exactly its count (std::logic_error otherwise).
  void add(const Draw& draw, const LevelSums& drawn);
  bool complete() const { return complete_; }
  // Samples the current plan still lacks, per level (0 for a level it has enough of).
  const std::vector<std::int64_t>& pending() const { return extra_; }
  const std::vector<LevelSums>& levels() const { return sums_; }
  virtual MlmcResult result() const = 0;

  // The whole state as numbers, for a checkpoint, and back (InputError for a state of another shape).
  virtual std::vector<double> save() const = 0;
  virtual void restore(const std::vector<double>& state) = 0;

 protected:
  // Every pending sample drawn: the plan again, the bias, new levels or the end (complete_).
  virtual void update() = 0;
  // extra_[l] = N_l - n_l with N_l = ceil(sqrt(V_l / C_l) sum_k sqrt(V_k C_k) / target): the fewest samples for
  // the sampling variance `target` at the least work (a Lagrange multiplier on sum V_l / N_l).
  void plan(const std::vector<double>& V, const std::vector<double>& C, double target);
  // True when no level lacks more than 1 % of its samples (then extra_ is cleared).
  bool settled();
  // The sums and pending counts as numbers (kLevelNumbers per level), and back from `at`.
  static constexpr std::size_t kLevelNumbers = 10;
  void save_levels(std::vector<double>& out) const;
  void restore_levels(const double* at, std::size_t levels);

  std::vector<LevelSums> sums_;
  std::vector<std::int64_t> extra_;
  bool converged_ = false, complete_ = false;
};

// Giles' adaptive algorithm: start with levels 0 .. min_levels, initial_samples each; plan the samples per level
// with the sampling variance (1 - theta) eps^2; once no level lacks more than 1 % of its samples, add a level while
// the bias estimate exceeds sqrt(theta) eps. plain: level 0 alone, until its sampling variance is within the target.
class MlmcDriver final : public LevelDriver {
 public:
  explicit MlmcDriver(const MlmcOptions& options);  // InputError for options it cannot run
  MlmcResult result() const override;
  std::vector<double> save() const override;
  void restore(const std::vector<double>& state) override;

 private:
  void update() override;

  MlmcOptions o_;
  int L_ = 0;
  std::vector<double> m_, V_, C_;
  double alpha_ = 0, beta_ = 0, gamma_ = 0, bias_ = 0;
};

// The driver run to the end in one call: sample(level, first, count, sums) draws every batch it asks for.
MlmcResult mlmc_estimate(const LevelSampler& sample, const MlmcOptions& options);

}  // namespace tokdyn
