// Checkpoints: a run's state after a step, the run file as it was at that step (its bytes), and the run's
// identity. Written to PATH.tmp and renamed when complete, so a checkpoint on disk is always whole; the
// run file is restored from it on a restart, which undoes whatever a crash did to the run file after it.
//   /           attrs: format, complete (written last), command, run_id, output (absolute run-file path),
//               checkpoint (its own absolute path when written), deck, deck_hash, ranks, step, steps, unit,
//               tokdyn_version, git_revision, written, inputs (key, path, size, content hash of every
//               input file, one line each)
//   /state/*    the state, as the run's RunState wrote it (distributed rows, replicated values, attributes)
//   /run_file   uint8 [bytes]: the partial run file at this step
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/io/hdf5.hpp"

namespace tokdyn {

struct CheckpointIdentity {
  std::string command;
  std::string run_id;      // drawn when the run started; the run file carries it too
  std::string output;      // absolute path of the run file the run writes
  std::string checkpoint;  // absolute path of this checkpoint when written (tells a moved run directory)
  std::string deck;        // the resolved deck
  std::string deck_hash;   // of the keys that fix the results (not the run-control ones)
  std::string unit = "layer";  // what a step is
  std::string written;     // time
  std::int64_t step = 0;   // steps done
  std::int64_t steps = 0;  // of the whole run
  int ranks = 0;           // of the run that wrote it
  std::string inputs;      // run/inputs.hpp: the input files the run started from ("" in older checkpoints)
};

// Collective from construction to close().
class CheckpointWriter {
 public:
  CheckpointWriter(const std::string& path, MPI_Comm comm, const CheckpointIdentity& identity);
  // [n, width] doubles, each rank its block of rows of partition.
  void rows(const std::string& name, const double* local, const Partition& partition, int width);
  // Values every rank holds (rank 0 writes them).
  void values(const std::string& name, const std::vector<double>& v);
  void integers(const std::string& name, const std::vector<std::int64_t>& v);
  void attribute(const std::string& name, std::int64_t value);
  void attribute(const std::string& name, double value);
  void attribute(const std::string& name, const std::string& value);
  // The bytes of the (flushed) run file.
  void run_file(const std::string& path);
  // Marks the checkpoint complete (last) and closes it.
  void close();
  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  h5::Handle file_, state_;
};

// Collective. InputError naming the file when it is missing, damaged, not a tokdyn checkpoint or incomplete.
class CheckpointReader {
 public:
  CheckpointReader(const std::string& path, MPI_Comm comm);
  const CheckpointIdentity& identity() const { return identity_; }
  const std::string& path() const { return path_; }
  void rows(const std::string& name, double* local, const Partition& partition, int width) const;
  std::vector<double> values(const std::string& name) const;
  std::vector<std::int64_t> integers(const std::string& name) const;
  // The same, refused (InputError naming the state) unless it holds `expected` values: a restored array's
  // size is what the deck and the step imply, never what a damaged or edited file says.
  std::vector<double> values(const std::string& name, std::size_t expected) const;
  std::vector<std::int64_t> integers(const std::string& name, std::size_t expected) const;
  bool has(const std::string& name) const;  // a dataset or attribute of the state
  std::int64_t int_attribute(const std::string& name) const;
  double real_attribute(const std::string& name) const;
  std::string text_attribute(const std::string& name) const;
  // Writes the stored run file to path (replacing it).
  void restore_run_file(const std::string& path) const;
  MPI_Comm comm() const { return comm_; }

 private:
  void read_identity();

  std::string path_;
  MPI_Comm comm_;
  h5::Handle file_, state_;
  CheckpointIdentity identity_;
};

// Renames from -> to on rank 0 after every rank is done with the file (atomic on POSIX).
void rename_collectively(const std::string& from, const std::string& to, MPI_Comm comm);
void remove_collectively(const std::string& path, MPI_Comm comm);

}  // namespace tokdyn
