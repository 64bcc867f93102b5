// Initial tokens X_0: iid uniform on S^{d-1} from the seed, or rows of a user's HDF5 file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/mpi/partition.hpp"

namespace tokdyn {

struct TokenSource {
  std::string init = "uniform";  // uniform | file
  std::string file, dataset = "X";
  std::uint64_t seed = 1;        // uniform: token i from (seed, i) alone
};

// x: this rank's rows [partition.count(rank), d].
void initial_tokens(const TokenSource& source, const Comm& comm, const Partition& partition, int d,
                    std::vector<double>& x);

}  // namespace tokdyn
