// Initial tokens from a user's HDF5 file: a dataset [N, d] of float64 (or any float type), read in slabs.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "tokdyn/core/mpi/partition.hpp"

namespace tokdyn {

// The token count N of dataset `dataset` of the token file, read from its shape before any rows (the run
// sizes its partition from it). InputError unless the shape is [N, d] with N > 0, as for a missing file or
// dataset. Collective.
std::int64_t token_file_rows(const std::string& path, const std::string& dataset, MPI_Comm comm, int d);

// Reads this rank's rows and projects them onto the sphere. InputError (naming the file) when the file is
// missing or not HDF5, the dataset is absent, has the wrong shape, or holds NaN/Inf/zero rows.
// Returns the largest | |x_i| - 1 | seen before projection (rows far from unit norm deserve a warning).
double read_initial_tokens(const std::string& path, const std::string& dataset, MPI_Comm comm,
                           const Partition& partition, int d, double* x_local);

}  // namespace tokdyn
