// A vector from a user's HDF5 file (a steering target): one dataset of any shape, read whole by every rank.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace tokdyn {

// The d values of dataset `dataset` in the HDF5 file `path`, in storage order, on every rank; `what` names the
// vector in errors ("steer.target 'u.h5:/u'"). InputError when the file or dataset is missing or damaged, or
// when it holds other than d values. Collective.
std::vector<double> read_vector_file(const std::string& path, const std::string& dataset, const std::string& what,
                                     MPI_Comm comm, int d);

}  // namespace tokdyn
