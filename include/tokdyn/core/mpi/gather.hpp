// The whole block-distributed array on every rank, for the O(N) serial diagnostics (transport distances)
// that need all the points at once.
#pragma once

#include <mpi.h>

#include <vector>

#include "tokdyn/core/mpi/partition.hpp"

namespace tokdyn {

// local: this rank's rows [partition.count(rank), width]; returns all rows [n_global, width] in index order.
std::vector<double> allgather_rows(MPI_Comm comm, const Partition& partition, const std::vector<double>& local, int width);

}  // namespace tokdyn
