// The one distributed all-pairs driver: each rank's block of source rows travels once around a ring
// of ranks (non-blocking messages overlapped with the visit of the block in hand), so every rank
// meets every block without an N x N matrix or an all-gather. Used by attention and every O(N^2) diagnostic.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"

namespace tokdyn {

class RingPass {
 public:
  // block: rows * width doubles for rows [global_begin, global_begin + rows) of the global array, laid
  // out as the caller packed them (row-major [rows, width], or [rows, w1] rows followed by [rows, w2]);
  // step s: the block belongs to rank (rank - s) mod P.
  using Visit = std::function<void(const double* block, std::int64_t rows, std::int64_t global_begin, int step)>;

  // width: doubles per row of the travelling blocks.
  RingPass(MPI_Comm comm, const Partition& partition, int width);

  // local: this rank's rows [partition.count(rank), width]. Calls visit for steps 0..steps-1 (own block
  // first); steps = P (the default) meets every block, steps = P/2 + 1 every unordered pair of blocks.
  void run(const double* local, const Visit& visit, int steps = -1);

  const Partition& partition() const { return partition_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_;
  Partition partition_;
  int width_, rank_ = 0, size_ = 1;
  std::vector<double> current_, next_;  // [max_count, width] each
};

}  // namespace tokdyn
