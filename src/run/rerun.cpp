#include "tokdyn/run/rerun.hpp"

#include <petscsys.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/version.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/io/run_compare.hpp"
#include "tokdyn/run/paths.hpp"

namespace tokdyn {
namespace {

RunFileHeader read_recorded(const std::string& path) {
  h5::Handle file = h5::open_input_file_here(path, "run file");
  try {
    RunFileHeader h = read_run_file_header(file);
    if (!h.missing.empty())
      throw InputError("'" + path + "' is not a tokdyn run file (no root attribute '" + h.missing + "')");
    return h;
  } catch (const InputError& e) {
    throw InputError("run file '" + path + "': " + e.what());
  }
}

// The recorded PETSc options that change what a run computes: logging, tracing and memory-checking options
// (-log_view, -info, -malloc_debug, ...) act at PetscInitialize and PetscFinalize, and inserted afterwards
// they make PetscFinalize fail; they change no result, so they are left out.
std::string replayed_options(const std::string& recorded, std::string& dropped) {
  std::string kept, word;
  bool drop = false;
  std::istringstream words(recorded);
  while (words >> word) {
    if (word.size() > 1 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1])) && word[1] != '.') {
      static const char* const prefixes[] = {"-log", "-info", "-malloc", "-memory_view", "-options_", "-history",
                                             "-objects_dump", "-on_error", "-debugger", "-start_in_debugger",
                                             "-stop_for_debugger", "-checkstack", "-fp_trap", "-viewer_"};
      drop = false;
      for (const char* p : prefixes)
        if (word.rfind(p, 0) == 0) drop = true;
    }
    std::string& to = drop ? dropped : kept;
    to += (to.empty() ? "" : " ") + word;
  }
  return kept;
}

// True when the comma list of rank counts holds another count than `ranks`.
bool other_rank_counts(const std::string& history, std::int64_t ranks) {
  for (std::size_t i = 0, j; i < history.size(); i = j + 1) {
    j = history.find(',', i);
    if (j == std::string::npos) j = history.size();
    if (history.compare(i, j - i, std::to_string(ranks)) != 0) return true;
  }
  return false;
}

}  // namespace

RunFileHeader rerun_header(const Comm& comm, const RunRequest& request) {
  const std::string& path = request.deck_path;
  if (path.empty()) throw InputError("tokdyn rerun needs a run file: tokdyn rerun FILE.h5 [--check]");
  const RunFileHeader r = read_recorded(path);
  if (r.tokdyn_version != version_string() || r.git_revision != git_revision())
    throw InputError("'" + path + "' was written by tokdyn " + r.tokdyn_version + " (git " + r.git_revision +
                     "), this is tokdyn " + version_string() + " (git " + git_revision() +
                     "): another build may give other bits, so it is not rerun");
  if (r.status != "complete") throw InputError("'" + path + "' holds a run that is not complete (status " + r.status + ")");
  if (request.check && other_rank_counts(r.rank_history, r.ranks))
    throw InputError("'" + path + "' was continued on other rank counts (" + r.rank_history +
                     "): its bits are those of no single rank count, so --check cannot certify them (a rerun "
                     "without --check agrees to round-off)");
  if (r.ranks != comm.size())
    throw InputError("'" + path + "' was run on " + std::to_string(r.ranks) + " rank" + (r.ranks == 1 ? "" : "s") +
                     ": rerun it on as many (mpiexec -n " + std::to_string(r.ranks) + " tokdyn rerun " + path +
                     (request.check ? " --check" : "") + ")");
  return r;
}

Rerun rerun_request(const Comm& comm, const RunFileHeader& r, const RunRequest& request, const DeckSchema& schema) {
  const std::string& path = request.deck_path;
  Rerun rerun;
  RunRequest& again = rerun.request;
  again.deck_text = r.deck;
  again.deck_origin = "the deck stored in '" + path + "'";
  again.force = request.force;
  // Run control is how the run was driven, not what it computed: stops, checkpoint cadence and limits of
  // the original are not replayed (a stop_at would stop the rerun), its checkpoint goes beside the rerun's
  // output. BLAS threads stay: they may change the bits.
  for (const KeySpec& k : schema.keys())
    if (k.run_control && k.name != "run.blas_threads") again.overrides.push_back("--" + k.name + "=" + k.default_text);
  again.overrides.push_back("--run.output=" + beside_output(path, ".rerun.h5"));
  for (const std::string& o : request.overrides) again.overrides.push_back(o);  // the user's output, if given
  const std::string& output = rerun.output =
      Deck::from_text(schema, r.deck, again.deck_origin).with_overrides(again.overrides).get_text("run.output");
  for (const std::string& mine : {output, output + ".part"})
    if (absolute_path(mine) == absolute_path(path))
      throw InputError("--run.output '" + output + "' is the file being rerun: choose another name");
  again.inputs_record = r.input_files;
  again.inputs_origin = "the run '" + path + "'";
  // The options the run's PETSc objects read, back in the database (options given now were refused before).
  std::string dropped;
  const std::string options = replayed_options(r.petsc_options, dropped);
  if (!options.empty()) TOKDYN_PETSC_CHECK(PetscOptionsInsertString(nullptr, options.c_str()));
  comm.print("rerun of '" + path + "': tokdyn " + r.command + " with its stored deck on " + std::to_string(comm.size()) +
             " rank" + (comm.size() == 1 ? "" : "s") + (options.empty() ? "" : ", PETSc options " + options) +
             (dropped.empty() ? "" : " (not replayed: " + dropped + ", they change no result)"));
  return rerun;
}

int check_rerun(const Comm& comm, const std::string& original, const std::string& output) {
  RunComparison c;
  if (comm.root()) c = compare_run_files(original, output);  // rank 0 reads both files
  comm.broadcast(c.difference);
  if (!c.difference.empty()) {
    if (comm.root())
      std::fprintf(stderr, "tokdyn: error: rerun --check: '%s' and '%s' differ: %s\n", original.c_str(),
                   output.c_str(), c.difference.c_str());
    return 1;
  }
  comm.print("rerun --check: '" + output + "' equals '" + original + "' bit for bit (" + std::to_string(c.datasets) +
             " datasets, " + std::to_string(c.attributes) + " attributes" +
             (c.timings ? ", " + std::to_string(c.timings) + " timings not compared" : std::string()) + ")");
  return 0;
}

}  // namespace tokdyn
