#include "tokdyn/core/mpi/gather.hpp"

#include <stdexcept>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

std::vector<double> allgather_rows(MPI_Comm comm, const Partition& partition, const std::vector<double>& local,
                                   int width) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (static_cast<std::int64_t>(local.size()) != partition.count(rank) * width)
    throw std::invalid_argument("allgather_rows: the local block does not match the partition");
  if (partition.n_global * width > 2147483647LL)
    throw InputError("allgather_rows: " + std::to_string(partition.n_global) + " rows exceed one MPI message");
  std::vector<int> counts(partition.ranks), displs(partition.ranks);
  for (int r = 0; r < partition.ranks; ++r) {
    counts[r] = static_cast<int>(partition.count(r) * width);
    displs[r] = static_cast<int>(partition.begin(r) * width);
  }
  std::vector<double> all(partition.n_global * width);
  TOKDYN_MPI_CHECK(MPI_Allgatherv(local.data(), counts[rank], MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                                  MPI_DOUBLE, comm));
  return all;
}

}  // namespace tokdyn
