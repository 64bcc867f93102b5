// The half ring: every unordered pair of tokens visited once, for sums whose pair term serves both tokens
// (the pair statistics, attention with symmetric logits). Block s of rank r is rank (r - s)'s, for steps
// 0 .. P/2: the own block counts its pairs i < j, blocks at distances below P/2 every pair, and the block
// pair at distance P/2 (P even) is split by rows: the lower rank takes the first half of its own rows, the
// upper rank the second half of the block's. Every rank visits about N^2 / (2P) pairs. What a visit adds to
// the block's rows (acc_width doubles per row) travels with the block and goes home at the end. A block and
// its accumulator hop after the visit (blocking): the hop moves (N/P)(width + acc_width) doubles against
// O((N/P)^2) pair work, small unless N/P is below a few hundred.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/mpi/partition.hpp"

namespace tokdyn {

// The pairs of one visit: local rows [i_lo, i_hi) with block rows [j_lo, j_hi); own_block: only global i < j.
struct PairRange {
  std::int64_t i_lo = 0, i_hi = 0, j_lo = 0, j_hi = 0;
  bool own_block = false;
};

class HalfRing {
 public:
  // block: [rows, width] as the caller packed it; block_acc: [rows, acc_width], zero when the block leaves home.
  using Visit = std::function<void(const double* block, double* block_acc, std::int64_t rows,
                                   std::int64_t block_begin, const PairRange& range)>;
  HalfRing(MPI_Comm comm, const Partition& partition, int width, int acc_width);
  // local: this rank's [n_local, width]; home_acc [n_local, acc_width] (unused when acc_width = 0): on
  // return, what every visit added to this rank's rows through block_acc. Collective.
  void run(const double* local, const Visit& visit, double* home_acc);

  const Partition& partition() const { return partition_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_;
  Partition partition_;
  int width_, acc_width_, rank_ = 0, size_ = 1;
  std::vector<double> current_, next_;  // [max_count, width + acc_width] each
};

// The Gram tiles of a pair range, g [bi, bj] = <x_i, y_j> for local rows x [.., d] and block rows y [.., d]
// (one BLAS call per tile, so every pass that tiles the same range gets the same bits), skipping the tiles
// of an own block that hold no pair i < j. tile_fn(i0, bi, j0, bj, g); first_column() gives a row's first
// pair column within a tile. T: double, or float for float32 tiles.
template <class T, class TileFn>
void gram_tiles(const T* x, const T* y, int d, const PairRange& r, std::int64_t row_begin, std::int64_t block_begin,
                int tile, T* g, TileFn&& tile_fn) {
  for (std::int64_t i0 = r.i_lo; i0 < r.i_hi; i0 += tile) {
    const int bi = static_cast<int>(std::min<std::int64_t>(tile, r.i_hi - i0));
    for (std::int64_t j0 = r.j_lo; j0 < r.j_hi; j0 += tile) {
      const int bj = static_cast<int>(std::min<std::int64_t>(tile, r.j_hi - j0));
      if (r.own_block && block_begin + j0 + bj - 1 <= row_begin + i0) continue;  // no pair i < j here
      gemm_nt(bi, bj, d, T(1), x + i0 * d, d, y + j0 * d, d, T(0), g, bj);
      tile_fn(i0, bi, j0, bj, g);
    }
  }
}
// Row i0 + i of a tile at block column j0: its first column with global j > i in an own block, else 0.
inline int first_column(const PairRange& r, std::int64_t row_begin, std::int64_t i0, int i, std::int64_t block_begin,
                        std::int64_t j0, int bj) {
  if (!r.own_block) return 0;
  return static_cast<int>(std::clamp<std::int64_t>(row_begin + i0 + i + 1 - (block_begin + j0), 0, bj));
}

}  // namespace tokdyn
