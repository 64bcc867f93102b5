// What the distributed attention tests share: a context over MPI_COMM_WORLD, a rank's rows of a global
// array and the gathered rows of every rank.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn::test {

// n tokens block-distributed over every rank, these weights, tiles of `tile` rows.
inline AttentionContext world_context(std::int64_t n, const AttentionWeights& w, int tile = 16) {
  const Comm comm;
  AttentionContext c;
  c.comm = comm.get();
  c.partition = Partition(n, comm.size());
  c.weights = w;
  c.tile = tile;
  return c;
}

// This rank's rows [count, width] of all [N, width].
inline std::vector<double> local_rows(const std::vector<double>& all, const Partition& part, int width) {
  const Comm comm;
  const std::int64_t b = part.begin(comm.rank()), c = part.count(comm.rank());
  return std::vector<double>(all.begin() + b * width, all.begin() + (b + c) * width);
}

// Every rank's rows [N, width], on every rank.
inline std::vector<double> gather_rows(const std::vector<double>& local, const Partition& part, int width) {
  const Comm comm;
  std::vector<double> all(part.n_global * width, 0.0), global(all.size());
  std::copy(local.begin(), local.end(), all.begin() + part.begin(comm.rank()) * width);
  TOKDYN_MPI_CHECK(MPI_Allreduce(all.data(), global.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_SUM,
                                 comm.get()));
  return global;
}

}  // namespace tokdyn::test
