// Checkpoints: the token state after a layer, the resolved deck, and how far the run file had got.
// Written to PATH.tmp and renamed when complete, so a checkpoint on disk is always whole.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "tokdyn/core/partition.hpp"
#include "tokdyn/io/hdf5.hpp"

namespace tokdyn {

struct CheckpointInfo {
  std::string command;
  std::string deck_text;
  std::string run_file;        // the partial run file this checkpoint continues
  std::int64_t layer = 0;      // layers done
  std::int64_t n = 0;
  int d = 0;
  hsize_t diagnostics_rows = 0;
  hsize_t snapshot_rows = 0;
  int ranks = 0;               // of the run that wrote it
  std::int64_t counter = 0;    // a solver's own integer state (the mean-field grid's sub-step level)
};

// Collective. x_local: this rank's rows [partition.count(rank), d].
void write_checkpoint(const std::string& path, MPI_Comm comm, const CheckpointInfo& info, const double* x_local,
                      const Partition& partition);
// Collective; InputError naming the file when it is missing, not a checkpoint, or truncated.
CheckpointInfo read_checkpoint_info(const std::string& path, MPI_Comm comm);
void read_checkpoint_tokens(const std::string& path, MPI_Comm comm, const Partition& partition, int d, double* x_local);

// Renames from -> to on rank 0 after every rank is done with the file (atomic on POSIX).
void rename_collectively(const std::string& from, const std::string& to, MPI_Comm comm);
void remove_collectively(const std::string& path, MPI_Comm comm);

}  // namespace tokdyn
