// tokdyn rerun FILE [--check]: a run file is its own reproducibility manifest. Its command, resolved deck
// (seed included), PETSc options and rank count run again, into FILE with .h5 -> .rerun.h5 (or the
// --run.output given), and --check compares the two files byte for byte (io/run_compare.hpp). Run control
// (stops, checkpoint cadence) and PETSc's logging options are not replayed; a run continued on other rank
// counts, or whose input files changed, is not certified. The command itself is looked up by the caller.
#pragma once

#include <string>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/run/run.hpp"

namespace tokdyn {

// The header of the run file request.deck_path, refused (InputError naming the reason) unless this build on
// these ranks can repeat it: written by this version and revision, complete, run on comm.size() ranks, and
// for --check on that one rank count throughout.
RunFileHeader rerun_header(const Comm& comm, const RunRequest& request);

// The request that repeats the run: its stored deck with run control at the defaults of schema (the run's
// command's), its output beside the file (or the user's --run.output, never the file itself), its input
// files' record. Puts the recorded PETSc options that change results back in the database and prints what
// it replays.
struct Rerun {
  RunRequest request;
  std::string output;  // the rerun's run file
};
Rerun rerun_request(const Comm& comm, const RunFileHeader& header, const RunRequest& request,
                    const DeckSchema& schema);

// --check: rank 0 compares the file with its rerun; every rank returns 0 when they agree (and prints so), 1
// with one error line naming the first difference.
int check_rerun(const Comm& comm, const std::string& original, const std::string& rerun);

}  // namespace tokdyn
