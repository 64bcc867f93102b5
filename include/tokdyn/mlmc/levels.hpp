// The coupled levels of tokdyn mlmc (doc/science.md sections 11.2 and 11.6). Index (a, b) integrates
// N_b = N0 2^b tokens over [0, T] in L_a = L0 2^a steps of an SDE scheme (mlmc.scheme; projected is the transformer
// layer with the Gaussian field of the MLP's infinite-width limit), and P = phi(X_T). Every path of a sample is
// driven by one draw of the noise, keyed by (run.seed, index, sample): one set of random features and one Brownian
// path, refined dyadically (noise/brownian_path.hpp), so a coarser depth's increments are exact sums of a finer
// one's; and, with fresh tokens, one set of 2N tokens whose halves are the coarser token count's two systems.
//  in depth:   Y = P(a, b) - P(a - 1, b)                       (the coarse path has L_{a-1} steps)
//  in tokens:  Y = P(a, b) - (P_1(a, b - 1) + P_2(a, b - 1)) / 2   (the antithetic halves: tokens 0..N/2-1 and
//              N/2..N-1 of the same draw, each a system of its own under the same noise)
//  both:       the mixed difference, the tokens' difference at depth a minus the same at depth a - 1.
// Each path is the scheme at its own depth, on its own iid tokens, under a noise of the right law: exactly the law
// of the coarser index's fine paths, as the telescoping sums need.
// At a finite MLP width m (width > 0) every path is the width-m transformer of doc/science.md section 1 instead
// (post-LN, fresh weights every layer), drawn one of two ways, both exact in law (section 11.5):
//  weights:     the MLPs themselves, keyed by the sample (dynamics/transformer.hpp): every system of the sample,
//               the antithetic halves too, sees the same MLPs. Levels in tokens, and plain Monte Carlo.
//  covariance:  given the tokens Y, layer l's field at them is Sigma^{1/2} Z + b_W, Sigma = (1/m) A A^T,
//               A = sigma(Y U^T / sqrt d + b_U), with U, b_U, b_W the MLP's draws and Z [n, d] keyed by (l, token).
//               The coarse path's layer k takes hidden rows r < m/2 of fine layer 2k, the others of 2k + 1, and
//               Z, b_W summed over the two and divided by sqrt 2. Levels in depth.
// No one draw couples both directions at a finite width, so the multi-index levels need width 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/mlmc/multi_index.hpp"
#include "tokdyn/mlmc/observables.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/random_mlp.hpp"

namespace tokdyn {

struct LevelSetup {
  std::int64_t n = 16;  // N0
  int d = 3;
  double horizon = 1;  // T
  double factor = 1;   // attention factor a (0: no attention)
  std::string attention_style = "softmax";
  AttentionWeights weights;
  int tile = 256;
  bool noise = true;
  std::string field_name = "features";
  FieldParams field;  // its seed is replaced by each sample's key
  std::string scheme = "projected";
  MlpParams mlp{.width = 0};  // 0: the infinite-width field above; m > 0: the width-m transformer (seed: the key)
  std::int64_t coarsest = 4;  // L0
  std::uint64_t seed = 1;
  std::vector<double> tokens;  // [N0, d]: every sample's initial tokens; empty: fresh uniform tokens per sample
  std::string observable = "order2";
  double beta = 1;  // the energy's
};

// Which directions a sample's difference takes: depth (a - 1), tokens (b - 1), both, or neither (P alone).
struct LevelDirections {
  bool depth = true, tokens = false;
};

class CoupledLevels {
 public:
  explicit CoupledLevels(const LevelSetup& setup);
  std::int64_t layers(int a) const { return setup_.coarsest << a; }
  std::int64_t tokens(int b) const { return setup_.n << b; }
  // Sample `index` of index i: fine = P(a, b) and coarse, with Y = fine - coarse the difference in the directions
  // asked where the index is above 0 (coarse 0 when none applies: Y = P). On this rank alone.
  void sample(const LevelIndex& i, LevelDirections along, std::int64_t index, double& fine, double& coarse) const;
  // What a sample costs in the model the plan uses: its paths' steps, each weighted by the work of a step on its
  // n tokens, n (a n + M + 1) with a = 1 under attention and M the field's modes, relative to N0's (so a sample of
  // the depth levels alone costs its steps).
  double cost(const LevelIndex& i, LevelDirections along) const;
  // The key of a sample's noise: a Philox draw of (run.seed, a + 64 b, sample).
  std::uint64_t sample_key(const LevelIndex& i, std::int64_t index) const;

 private:
  // How a path of a finite width draws its MLPs (see above): the weights, the covariance of its own layers, or the
  // covariance merged from a path of twice its depth.
  enum class WidthDraw { weights, covariance, merged };
  double path(std::int64_t steps, std::uint64_t key, const double* x0, std::int64_t n, WidthDraw draw) const;
  double covariance_path(std::int64_t steps, std::uint64_t key, const double* x0, std::int64_t n, bool merged) const;
  // P at depth a of N_b tokens: the system of rows 0..N_b-1 of x0, or (halves) the mean of the two systems of rows
  // 0..N_b/2-1 and N_b/2..N_b-1.
  double at(int a, std::int64_t n, bool halves, std::uint64_t key, const double* x0, WidthDraw draw) const;
  double step_work(std::int64_t n) const;

  LevelSetup setup_;
  std::unique_ptr<TokenObservable> observable_;
};

}  // namespace tokdyn
