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
  // single: the two tile products in float32 (queries, keys, values and weights rounded to float, sgemm),
  // the running max, the exponentials and every sum across tiles in float64. The error against float64,
  // per output row i and head (u = 2^-24, S = max_j sum_a |q_ia k_ja| of the row, W = sum_j w_ij |V x_j|
  // with the row's weights w_ij, normalised for SA):
  //   |out32 - out64| <= ((d_h + 2) S + tile + 2) u W   (USA; SA twice the logits' term: numerator and sum)
  // about 1.6e-5 W at d_h = 16, S = 1, tile = 256 in the worst case, ~1e-7 W typically (round-off is random).
  OnlineSoftmax(std::int64_t n, int heads, int head_dim, int tile, bool single = false);

  // Before the first visit of a pass: acc = 0, m = -inf, l = 0. Every visit of a pass takes the same queries.
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
  bool single_;
  std::vector<float> queries32_, block32_, tile32_, sums32_;  // [n, D], [rows, 2D], [tile, tile], [tile, d_h]
  bool queries32_ready_ = false;                             // queries32_ holds this pass's queries
};

}  // namespace tokdyn
