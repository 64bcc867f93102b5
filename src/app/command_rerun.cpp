// tokdyn rerun FILE [--check]: a run file is its own reproducibility manifest. Its command, resolved deck
// (seed included), PETSc options and rank count run again, into FILE with .h5 -> .rerun.h5 (or the
// --run.output given), and with --check every dataset and every attribute below the root of the two files is
// compared byte for byte (timings aside). Run control (stops, checkpoint cadence) and PETSc's logging options
// are not replayed; a run continued on other rank counts, or whose input files changed, is not certified.
#include <petscsys.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <cstdio>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/version.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/io/run_file.hpp"
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

// The stored bytes of a dataset, in its file type.
std::vector<unsigned char> dataset_bytes(hid_t file, const std::string& path, std::string& type_text) {
  h5::Handle set = h5::open_dataset(file, path);
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Dget_type(set)));
  if (TOKDYN_H5(H5Tis_variable_str(type)) > 0 || H5Tget_class(type) == H5T_VLEN)
    throw SystemError("rerun --check: dataset '" + path + "' has variable-length elements");
  hsize_t elements = 1;
  for (hsize_t n : h5::dims(set)) elements *= n;
  std::vector<unsigned char> bytes(elements * H5Tget_size(type));
  type_text = std::to_string(H5Tget_class(type)) + ":" + std::to_string(H5Tget_size(type));
  for (hsize_t n : h5::dims(set)) type_text += " " + std::to_string(n);
  if (!bytes.empty()) TOKDYN_H5(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()));
  return bytes;
}

// Timings among attributes: names ending in "seconds" or "_per_second" (/train@tokens_per_second). The
// dimension-scale links are object references, equal in meaning, not in bytes.
bool skipped_attribute(const std::string& name) {
  auto ends = [&](const std::string& s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
  return ends("seconds") || ends("_per_second") || name == "DIMENSION_LIST" || name == "REFERENCE_LIST";
}

// "" when every group and dataset below the root carries the same attributes with the same bytes (results
// such as /markov@t_I live there); the root's are the run's identity (its id, times, output) and differ.
std::string compare_attributes(hid_t a, hid_t b, std::size_t& attributes) {
  for (const std::string& p : h5::object_paths(a)) {
    if (!h5::exists(b, p)) return "'" + p + "' is missing from the rerun";
    h5::Handle x(TOKDYN_H5(H5Oopen(a, p.c_str(), H5P_DEFAULT)), H5Oclose), y(TOKDYN_H5(H5Oopen(b, p.c_str(), H5P_DEFAULT)), H5Oclose);
    std::vector<std::string> in_x = h5::attribute_names(x), in_y = h5::attribute_names(y);
    std::erase_if(in_x, skipped_attribute);
    std::erase_if(in_y, skipped_attribute);
    for (const std::string& n : in_y)
      if (std::find(in_x.begin(), in_x.end(), n) == in_x.end()) return "attribute '" + p + "@" + n + "' is new in the rerun";
    for (const std::string& n : in_x) {
      if (std::find(in_y.begin(), in_y.end(), n) == in_y.end())
        return "attribute '" + p + "@" + n + "' is missing from the rerun";
      if (h5::attribute_bytes(x, n) != h5::attribute_bytes(y, n)) return "attribute '" + p + "@" + n + "' differs";
      ++attributes;
    }
  }
  return "";
}

// "" when every dataset of a is in b with the same type, shape and bytes, and b has no other; else what differs.
// Timings (datasets with the attribute `timing`, e.g. spectrum/seconds) are the one thing two runs do not
// share: present in both, not compared (counted in `timings`).
std::string compare_runs(const std::string& a_path, const std::string& b_path, std::size_t& compared,
                         std::size_t& attributes, std::size_t& timings) {
  h5::Handle a = h5::open_input_file_here(a_path, "run file"), b = h5::open_input_file_here(b_path, "run file");
  const std::vector<std::string> in_a = h5::dataset_paths(a), in_b = h5::dataset_paths(b);
  for (const std::string& p : in_b)
    if (std::find(in_a.begin(), in_a.end(), p) == in_a.end()) return "dataset '" + p + "' is new in the rerun";
  compared = attributes = timings = 0;
  for (const std::string& p : in_a) {
    if (std::find(in_b.begin(), in_b.end(), p) == in_b.end()) return "dataset '" + p + "' is missing from the rerun";
    if (h5::has_attribute(h5::open_dataset(a, p), "timing")) {
      ++timings;
      continue;
    }
    std::string ta, tb;
    const std::vector<unsigned char> x = dataset_bytes(a, p, ta), y = dataset_bytes(b, p, tb);
    if (ta != tb) return "dataset '" + p + "' has another type or shape (" + ta + " against " + tb + ")";
    std::size_t differ = 0, first = 0;
    for (std::size_t k = x.size(); k-- > 0;)
      if (x[k] != y[k]) ++differ, first = k;
    if (differ > 0)
      return "dataset '" + p + "' differs in " + std::to_string(differ) + " of " + std::to_string(x.size()) +
             " bytes (first at byte " + std::to_string(first) + ")";
    ++compared;
  }
  return compare_attributes(a, b, attributes);
}

}  // namespace

DeckSchema rerun_schema() { return DeckSchema(); }

int run_rerun(const Comm& comm, const DeckSchema&, const RunRequest& request) {
  const std::string& path = request.deck_path;
  if (path.empty()) throw InputError("tokdyn rerun needs a run file: tokdyn rerun FILE.h5 [--check]");
  const RunFileHeader r = read_recorded(path);
  if (r.tokdyn_version != version_string() || r.git_revision != git_revision())
    throw InputError("'" + path + "' was written by tokdyn " + r.tokdyn_version + " (git " + r.git_revision +
                     "), this is tokdyn " + version_string() + " (git " + git_revision() +
                     "): another build may give other bits, so it is not rerun");
  if (r.status != "complete") throw InputError("'" + path + "' holds a run that is not complete (status " + r.status + ")");
  if (request.check && r.rank_history.find(',') != std::string::npos) {
    std::string counts = r.rank_history;
    bool mixed = false;
    for (std::size_t i = 0, j; i < counts.size(); i = j + 1) {
      j = counts.find(',', i);
      if (j == std::string::npos) j = counts.size();
      mixed = mixed || counts.compare(i, j - i, std::to_string(r.ranks)) != 0;
    }
    if (mixed)
      throw InputError("'" + path + "' was continued on other rank counts (" + r.rank_history +
                       "): its bits are those of no single rank count, so --check cannot certify them (a rerun "
                       "without --check agrees to round-off)");
  }
  if (r.ranks != comm.size())
    throw InputError("'" + path + "' was run on " + std::to_string(r.ranks) + " rank" + (r.ranks == 1 ? "" : "s") +
                     ": rerun it on as many (mpiexec -n " + std::to_string(r.ranks) + " tokdyn rerun " + path + ")");
  const Command* command = find_command(r.command);
  if (!command || command->outputs != Outputs::run)
    throw InputError("'" + path + "' holds a run of '" + r.command + "', which tokdyn rerun cannot repeat");

  RunRequest again;
  again.deck_text = r.deck;
  again.deck_origin = "the deck stored in '" + path + "'";
  again.force = request.force;
  const DeckSchema schema = command->schema();
  const std::string output_key = "run.output";
  // Run control is how the run was driven, not what it computed: stops, checkpoint cadence and limits of
  // the original are not replayed (a stop_at would stop the rerun), its checkpoint goes beside the rerun's
  // output. BLAS threads stay: they may change the bits.
  for (const KeySpec& k : schema.keys())
    if (k.run_control && k.name != "run.blas_threads") again.overrides.push_back("--" + k.name + "=" + k.default_text);
  again.overrides.push_back("--" + output_key + "=" + beside_output(path, ".rerun.h5"));
  for (const std::string& o : request.overrides) again.overrides.push_back(o);  // the user's output, if given
  const Deck deck = Deck::from_text(schema, r.deck, again.deck_origin).with_overrides(again.overrides);
  const std::string output = deck.get_text(output_key);
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
  const int rc = command->run(comm, schema, again);
  if (rc != 0 || !request.check) return rc;

  // Rank 0 reads both files; every rank returns its verdict.
  std::string verdict;
  std::size_t compared = 0, attributes = 0, timings = 0;
  if (comm.root()) verdict = compare_runs(path, output, compared, attributes, timings);
  comm.broadcast(verdict);
  if (!verdict.empty()) {
    if (comm.root()) std::fprintf(stderr, "tokdyn: error: rerun --check: '%s' and '%s' differ: %s\n", path.c_str(), output.c_str(), verdict.c_str());
    return 1;
  }
  comm.print("rerun --check: '" + output + "' equals '" + path + "' bit for bit (" + std::to_string(compared) +
             " datasets, " + std::to_string(attributes) + " attributes" + (timings ? ", " + std::to_string(timings) + " timings not compared" : std::string()) + ")");
  return 0;
}

}  // namespace tokdyn
