// Multi-index Monte Carlo over two discretisation parameters (doc/science.md section 11.6): depth L_a = L0 2^a and
// token count N_b = N0 2^b. E[P] at the finest index is the sum over an index set of E[Delta_(a,b)], the mixed
// differences Delta = (P_{a,b} - P_{a-1,b}) - (P_{a,b-1} - P_{a-1,b-1}) (a term without its a-1 or b-1 part at
// a = 0 or b = 0), each estimated by samples of its own (the sampler's Y). The sets grow by level ell: total degree
// {a + b <= ell} or the box {a, b <= ell}. The samples per index are planned as in Giles' algorithm; the bias is
// estimated by the sum of |E Delta| over the set's last layer (a + b = ell, or max(a, b) = ell), and the set grows
// while it exceeds sqrt(theta) eps.
#pragma once

#include <cstdint>
#include <vector>

#include "tokdyn/mlmc/estimator.hpp"

namespace tokdyn {

struct LevelIndex {
  int depth = 0, tokens = 0;  // a, b
};

struct MimcOptions {
  double eps = 1e-2;
  double theta = 0.5;
  std::int64_t initial_samples = 100;
  bool total_degree = true;  // else the box
  int min_level = 2, max_level = 8;  // ell
};

class MimcDriver final : public LevelDriver {
 public:
  explicit MimcDriver(const MimcOptions& options);  // InputError for options it cannot run
  // The index of each level (position) of levels() and pending().
  const std::vector<LevelIndex>& indices() const { return indices_; }
  int level() const { return ell_; }
  // estimate, standard_error, bias, work, converged; alpha, beta, gamma fitted along the depth axis (b = 0), the
  // token axis's in tokens_alpha and tokens_beta; mc_work 0 (not estimated).
  MlmcResult result() const override;
  RateFit tokens_alpha() const, tokens_beta() const;
  std::vector<double> save() const override;
  void restore(const std::vector<double>& state) override;

 private:
  void update() override;
  void grow();  // the indices of the next level, initial_samples each
  bool last_layer(const LevelIndex& i) const;
  RateFit axis_fit(bool depth_axis, bool variances) const;

  MimcOptions o_;
  int ell_ = 0;
  std::vector<LevelIndex> indices_;
  double bias_ = 0;
};

}  // namespace tokdyn
