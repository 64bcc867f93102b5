// The simplified transformer layer of doc/science.md section 7.2, one power-method step on the tokens:
// x_i(t+1) = N( r x_i + sum_h O_h sum_j A^h_ij V_h x_j ), N(y) = y/|y|, FFN dropped, LayerNorm -> L2 norm.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

struct PowerLayerOptions {
  // A^h of the layer: any registered attention style (attention/attention.hpp), e.g. softmax (row softmax of
  // score_scale <Q_h x_i, K_h x_j>), uniform (A_ij = 1/N: every token becomes N(r x_i + F xbar)), identity
  // (A = I: each token runs the power method on F, or I + F, by itself).
  std::string attention = "softmax";
  bool causal = false;    // j <= i by global token index (GPT-style)
  bool residual = false;  // r = 1: the matrix that acts is I + F
  int tile = 256;         // rows per BLAS tile of the softmax logits
};

// One layer applied to block-distributed tokens: the attention style gives z_i = (sum_j A^h_ij V_h x_j)_h, the
// layer adds the output projection, the residual and the normalisation. Memory O((N/P) D) plus the style's.
class PowerLayer {
 public:
  // width: D = H d_h of every layer that will be applied.
  PowerLayer(MPI_Comm comm, const Partition& partition, int d, int width, const PowerLayerOptions& options);

  // x: this rank's tokens [n_local, d], replaced by x(t+1). Collective. A token whose output is zero or
  // not finite stops every rank with an InputError naming layer and token (the lowest global index).
  void apply(const LayerWeights& w, std::int64_t layer, double* x);

  const PowerLayerOptions& options() const { return options_; }
  const Partition& partition() const { return partition_; }

 private:
  MPI_Comm comm_;
  Partition partition_;
  int d_, width_;
  std::int64_t begin_ = 0, n_local_ = 0;
  PowerLayerOptions options_;
  std::unique_ptr<Attention> attention_;  // made at the first layer, which gives the heads
  std::vector<double> z_;                 // [n_local, D]: sum_j A^h_ij V_h x_j, head h in columns [h d_h, (h+1) d_h)
  std::vector<double> y_;                 // [n_local, d]
};

}  // namespace tokdyn
