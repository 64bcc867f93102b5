// One run per output: an advisory lock file, OUTPUT.lock, created exclusively by rank 0 and holding who
// runs (host, pid, start time, run id, Slurm job). A lock whose process is gone (same host) or that an
// earlier start of the same Slurm job left behind (a requeue after a node failure) is stale: it is named,
// removed and taken over. Any other is refused at once.
#pragma once

#include <string>

#include "tokdyn/core/mpi/comm.hpp"

namespace tokdyn {

class RunLock {
 public:
  RunLock() = default;
  // Collective. InputError on every rank when a live run holds the lock; `what` names the file it guards.
  void acquire(const Comm& comm, const std::string& path, const std::string& run_id, const std::string& what = "output");
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock() { release(); }
  // Collective, changes nothing: InputError on every rank, acquire's message, when a live run holds the lock
  // (a dry run's check).
  static void check(const Comm& comm, const std::string& path, const std::string& what = "output");
  // Removes the lock (rank 0; no MPI call, so it is safe on an error path).
  void release();
  bool held() const { return held_; }

  // What a lock file says about its holder ("pid 12 on host h since T (run id R)"), whether that holder
  // looks alive from here, and "" when there is no lock. Local (call on rank 0).
  static std::string describe(const std::string& path, bool& alive);

 private:
  std::string path_;
  bool held_ = false;  // by this process (rank 0)
  int cleanup_ = -1;
};

}  // namespace tokdyn
