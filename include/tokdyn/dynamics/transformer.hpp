// The discrete random transformer of doc/science.md section 1: for l = 0..L-1,
//   Y_l     = LN( X_l + a (T/L) Attn_{X_l}(X_l) )
//   X_{l+1} = LN( Y_l + sqrt(T/L) G^m_{l+1}(Y_l) ),   LN(v) = v / |v|,
// with each sub-step x <- x + h F(x) in one of four normalisations (model.norm; doc/science.md section 1.3):
//   post  x <- LN(x + h F(x))                      (the above)
//   pre   x <- x + h F(LN(x))                      (tokens leave the sphere)
//   peri  x <- x + h LN(F(LN(x)))
//   ngpt  x <- LN(x + h alpha * (LN(F(x)) - x))    (alpha [d], element-wise)
// F(x) of the attention is Attn over every token in the same form (pre, peri: the LN(x_j)).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/dynamics/dynamics.hpp"
#include "tokdyn/noise/random_mlp.hpp"

namespace tokdyn {

struct TransformerParams {
  std::int64_t n = 64;   // N
  int d = 4;
  std::int64_t layers = 100;  // L
  double horizon = 1;    // T
  double factor = 1;     // attention factor a (0: no attention sub-step)
  std::string norm = "post";         // post | pre | peri | ngpt
  std::vector<double> ngpt_alpha;    // [d]: nGPT's step sizes (norm = ngpt)
};

class Transformer final : public Dynamics {
 public:
  // attention may be null (switched off); mlp empty when the MLP sub-step is off.
  Transformer(const TransformerParams& params, std::int64_t n_local, std::unique_ptr<Attention> attention,
              std::optional<RandomMlp> mlp);

  double time(std::int64_t layer) const override { return layer * dt(); }
  double work_per_step() const override;
  std::string work_unit() const override { return attention_ ? "pairs" : "token-layers"; }
  Attention* attention() const override { return attention_.get(); }
  const double* directions(const double* x) override;

  double dt() const { return params_.horizon / static_cast<double>(params_.layers); }

 private:
  TransformerParams params_;
  std::int64_t n_local_;
  void advance(std::int64_t layer, double* x, StepStatistics* statistics) override;
  // One sub-step x <- x + h F(x) in params_.norm; map(in, out) writes F(in) [n_local, d] into out.
  template <class Map>
  void substep(double* x, double h, Map&& map);

  std::unique_ptr<Attention> attention_;
  std::optional<RandomMlp> mlp_;
  std::vector<double> buffer_;  // [n_local, d]: Attn or G
  std::vector<double> unit_;    // [n_local, d]: LN(x) (pre, peri; directions)
};

}  // namespace tokdyn
