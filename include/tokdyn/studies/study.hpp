// A command's study: the science of one run. It is the edge where deck keys become numbers: its
// schema() declares the keys, its constructor reads them once into parameter structs (nothing below the
// study layer reads a deck) and opens what is small (weight headers, sizes). It is built in two steps
// so that nothing large is allocated before the run layer's memory check: memory() estimates from the
// parameters, then setup() builds the run state the run layer drives (whose finish() writes the
// study's results through io/). run_study is the one driver of every command with a run file.
#pragma once

#include <cstdint>
#include <string>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/run/memory.hpp"
#include "tokdyn/run/run.hpp"
#include "tokdyn/run/state.hpp"

namespace tokdyn {

class Study {
 public:
  virtual ~Study() = default;
  // The large arrays per rank of the run, before any is allocated.
  virtual MemoryEstimate memory() const = 0;
  // Collective, after the memory check: builds the run state (owned by the study).
  virtual RunState& setup() = 0;
  // The line printed before the run, "tokdyn NAME: parameters" (the driver adds ranks and output).
  virtual std::string banner() const = 0;
  // The work the run plans (--dry-run): what a step costs and how many there are; empty where the banner
  // says it all.
  virtual std::string plan() const { return ""; }
  // Tokens of the /tokens snapshots (0: none) and the width d, for the run file.
  virtual std::int64_t snapshot_tokens() const { return 0; }
  virtual int width() const = 0;
};

// The driver: memory check, setup, banner, the run layer's step loop. Returns the exit code.
int drive_study(Run& run, Study& study);

// A command that is a study S (S(comm, deck) reads its parameters): the run (files, lock, --resume,
// --status), then drive_study.
template <class S>
int run_study(const Comm& comm, const DeckSchema& schema, const RunRequest& request, const std::string& command) {
  Run run(comm, schema, request, command);
  if (run.done()) return 0;
  S study(comm, run.deck());
  return drive_study(run, study);
}

}  // namespace tokdyn
