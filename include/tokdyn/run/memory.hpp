// Memory a run will need per rank, estimated before it allocates: the large arrays of its state and
// kernels, each named. A run estimated to need more than run.max_memory, or than its node gives each of
// its ranks (MemAvailable and the cgroup limit, shared by the node's ranks), is refused with one line.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"

namespace tokdyn {

class MemoryEstimate {
 public:
  // An array of count elements of `bytes` each (doubles: 8), named as the refusal will name it.
  void add(const std::string& what, double count, double bytes = 8);
  double total() const;
  // The largest items, "U, W of the MLP: 7.6 GB; tokens: 1.2 MB".
  std::string largest(int items = 3) const;

 private:
  std::vector<std::pair<std::string, double>> items_;
};

// Bytes this rank may use: max_memory when positive, else what its node has available shared by the
// node's ranks (collective: counts the ranks of each node).
double memory_per_rank(const Comm& comm, double max_memory);

// Collective: InputError on every rank when some rank's estimate exceeds what it may use.
void require_memory(const Comm& comm, const MemoryEstimate& estimate, double max_memory);

// The estimate with what this process holds now (libraries, MPI and PETSc buffers) added: what a run needs.
MemoryEstimate with_process(const MemoryEstimate& estimate);
// Peak resident memory of this process so far (getrusage), in bytes.
double peak_memory();

}  // namespace tokdyn
