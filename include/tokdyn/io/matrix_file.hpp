// Matrices from a user's HDF5 file (initial weights): a dataset of a given shape, or the last row of a series
// [K, shape...] (a run file's records). Read by every rank (a collective open), hostile files refused.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tokdyn {

// Whether `path` is an HDF5 file (its signature; false when it cannot be read).
bool is_hdf5(const std::string& path);

// Whether the HDF5 file `path` holds `dataset` (a group path). InputError when it is no HDF5 file. Collective.
bool matrix_file_has(const std::string& path, const std::string& dataset, const std::string& what, MPI_Comm comm);

// Which part of a dataset read_matrix_file reads: all of it (its shape must be `shape`), or one row of a series
// [K, shape...]: the last, or row r >= 0.
constexpr std::int64_t kWholeDataset = -1, kLastRow = -2;

// The values of `dataset` in storage order: all of it, or row `row` of a series (kLastRow: the last; *rows: K).
// `what` names the file in errors ("model.init_file 'w.h5'"). InputError when the file or dataset is missing
// or damaged, of another shape, or without that row.
std::vector<double> read_matrix_file(const std::string& path, const std::string& dataset,
                                     const std::vector<std::int64_t>& shape, std::int64_t row, const std::string& what,
                                     MPI_Comm comm, std::int64_t* rows = nullptr);

}  // namespace tokdyn
