// The simplified transformer layer of doc/science.md section 7.2, one power-method step on the tokens:
// x_i(t+1) = N( r x_i + sum_h O_h sum_j A^h_ij V_h x_j ), N(y) = y/|y|, FFN dropped, LayerNorm -> L2 norm.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/attention/ring_pass.hpp"
#include "tokdyn/core/partition.hpp"
#include "tokdyn/spectral/layer_weights.hpp"

namespace tokdyn {

// A^h of the layer:
//   softmax:  row softmax of score_scale <Q_h x_i, K_h x_j> (max-subtracted; causal: over j <= i)
//   uniform:  A_ij = 1/N (causal: 1/(i+1) for j <= i): every token becomes N(r x_i + F xbar)
//   identity: A = I: each token runs the power method on F (or I + F) by itself
enum class PowerAttention { softmax, uniform, identity };
// InputError naming power.attention and the known kinds for any other name.
PowerAttention power_attention(const std::string& name);
const char* power_attention_name(PowerAttention kind);

struct PowerLayerOptions {
  PowerAttention attention = PowerAttention::softmax;
  bool causal = false;    // j <= i by global token index (GPT-style)
  bool residual = false;  // r = 1: the matrix that acts is I + F
  int tile = 256;         // rows per BLAS tile of the softmax logits
};

// One layer applied to block-distributed tokens. Softmax attention visits every rank's keys and values
// (K_h x_j, V_h x_j side by side, [n_local, 2D]) once by the ring pass with an online softmax per head;
// uniform attention needs only the per-rank sums of V x_j; identity none. Memory O((N/P) D) plus a tile.
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
  void softmax_sums(const LayerWeights& w, const double* x);  // z_ = sum_j A_ij V_h x_j per head
  void uniform_sums(const LayerWeights& w, const double* x);
  void visit(const double* block, std::int64_t rows, std::int64_t global_begin, int heads, int head_dim);

  MPI_Comm comm_;
  Partition partition_;
  int d_, width_, rank_ = 0;
  std::int64_t begin_ = 0, n_local_ = 0;
  PowerLayerOptions options_;
  RingPass ring_;                     // blocks [rows, 2D]: K x_j, V x_j
  std::vector<double> queries_;       // [n_local, D]: score_scale Q x_i
  std::vector<double> keys_values_;   // [n_local, 2D]
  std::vector<double> z_;             // [n_local, D]: sum_j A^h_ij V_h x_j, head h in columns [h d_h, (h+1) d_h)
  std::vector<double> max_, sum_;     // [n_local, H]: running max and sum of the online softmax
  std::vector<double> tile_;          // [tile, tile] logits, then weights
  std::vector<double> y_;             // [n_local, d]
};

}  // namespace tokdyn
