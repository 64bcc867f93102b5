// The MPI communicator a run lives on, with its rank, size and rank-0 printing.
#pragma once

#include <mpi.h>

#include <string>

namespace tokdyn {

class Comm {
 public:
  explicit Comm(MPI_Comm comm = MPI_COMM_WORLD);
  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }

  // Prints on rank 0 only (stdout, flushed): progress and summaries.
  void print(const std::string& line) const;
  // Rank 0: the line to the run's log only (a line the console shows at the progress cadence).
  void log(const std::string& line) const;
  void barrier() const;
  // Rank 0's text, on every rank.
  void broadcast(std::string& text) const;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace tokdyn
