// The online softmax of a block of queries against blocks of keys and values that arrive one at a time
// (the ring pass): per query row i and head h a running max m, a running sum l = sum_j e^{s_ij - m} and
// acc = sum_j e^{s_ij - m} V_h x_j, rescaled whenever m grows, so no N x N logits matrix ever exists.
// The one tile visit of every softmax-type all-pairs sum (the attention styles, the power layer).
#pragma once

#include <cstdint>
#include <vector>

namespace tokdyn {

class OnlineSoftmax {
 public:
  // n: query rows; heads H of head_dim d_h each (D = H d_h); tile: rows per BLAS tile of the logits.
  OnlineSoftmax(std::int64_t n, int heads, int head_dim, int tile);

  // Before the first visit of a pass: acc = 0, m = -inf, l = 0.
  void reset();
  // queries [n, D] (score scale included, head h in columns [h d_h, (h+1) d_h)); block [rows, 2D]: K x_j
  // then V x_j per row; log_mass [rows] added to the logits (null: none). causal: key j (global index
  // key_begin + j) is masked for query i (global index query_begin + i) when j > i.
  void visit(const double* queries, const double* block, std::int64_t rows, const double* log_mass, bool causal,
             std::int64_t query_begin, std::int64_t key_begin);
  // After the pass, per head: out = acc / l (normalised, SA; 0 for a row with no unmasked mass), or
  // out = scale e^m acc (unnormalised, USA with scale 1/N). out [n, D].
  void normalized(double* out) const;
  void unnormalized(double scale, double* out) const;

 private:
  std::int64_t n_;
  int heads_, head_dim_, width_, tile_size_;
  std::vector<double> acc_;        // [n, D]
  std::vector<double> max_, sum_;  // [n, H]
  std::vector<double> tile_;       // [tile, tile] logits, then weights
};

}  // namespace tokdyn
