// The run file of doc/run-files.md: one HDF5 file per run, written collectively.
//   /                 attrs: tokdyn_version, git_revision, command, deck, seed, ranks, start_time,
//                     end_time, run_id, status = running | checkpointed | complete | failed (and error),
//                     petsc_options, input_files (key, path, size, content hash per line), rank_history
//                     (the rank count of every start and continuation, "2,3"), and every deck key as a
//                     typed attribute ("model.N" = 64)
//   /tokens/X         [snapshots, N, d];  /tokens/layer, /tokens/time [snapshots]
//   /diagnostics/*    one series per observable, indexed like /diagnostics/layer (created with its first row)
//   /<study>/*        study-specific results (n = 0 in RunInfo: no /tokens)
// Every path written is declared (io/outputs.hpp: an undeclared one is an internal error, std::logic_error),
// and every dataset carries its declaration's description, units and axes when checkpointed or complete.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/io/outputs.hpp"

namespace tokdyn {

class Deck;

// The root attributes of a run file (complete or partial) that are read back: by --status, --resume and
// tokdyn rerun. Absent ones are empty (ranks: 0); `missing` names the first of command, deck,
// tokdyn_version, git_revision, status and ranks the file lacks ("" when it has them all: a tokdyn run file).
// InputError naming the attribute when one holds the wrong type.
struct RunFileHeader {
  std::string command, deck, tokdyn_version, git_revision, status, error, run_id, petsc_options, rank_history,
      input_files, missing;
  std::int64_t ranks = 0;
};
RunFileHeader read_run_file_header(hid_t file);

struct RunInfo {
  std::string command;
  std::string deck_text;
  std::uint64_t seed = 0;
  std::int64_t n = 0;  // tokens of the /tokens snapshots (0: none)
  int d = 0;
  std::string run_id;
  const Deck* deck = nullptr;  // its keys become typed root attributes
  std::string inputs;          // run/inputs.hpp: the input files (key, path, size, hash), one line each
};

// One row of diagnostics: scalars and integer histograms, by name (created on first use).
struct DiagnosticsRow {
  std::int64_t layer = 0;
  double time = 0;
  std::vector<std::pair<std::string, double>> scalars;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> counts;
};

class RunFile;

// A group of results of a run file (/<group>/*), from RunFile::group. Every write names a path declared in
// io/outputs.hpp ("power/basis_first", "power@state") with the type it writes; every call is collective.
class RunGroup {
 public:
  // A dataset written whole: every rank passes the same values (rank 0 writes them); shape {values.size()}
  // unless given.
  void write(const std::string& name, const std::vector<double>& values, const std::vector<hsize_t>& shape = {});
  void write_integers(const std::string& name, const std::vector<std::int64_t>& values,
                      const std::vector<hsize_t>& shape = {});
  // An attribute of the group, or with name "dataset@attribute" of one of its datasets; every rank passes the
  // same value.
  void attribute(const std::string& name, double value);
  void attribute(const std::string& name, std::int64_t value);
  void attribute(const std::string& name, const std::string& value);
  // Row `row` of the series `name` [rows, row_dims...], created on first use or found again after a restart
  // (its rows go on). This rank writes elements [begin, begin + count) of the row's first dimension (a 1-D
  // series: count 0 or 1).
  void write_row(const std::string& name, const std::vector<hsize_t>& row_dims, hsize_t row, const double* data,
                 hsize_t begin, hsize_t count);
  void write_row(const std::string& name, const std::vector<hsize_t>& row_dims, hsize_t row,
                 const std::int64_t* data, hsize_t begin, hsize_t count);
  // Row `row` of a series of [k, n] rows, by columns: this rank writes columns [begin, begin + count) of each
  // of the k sub-rows, data [k, count] row-major (a rank with no columns passes count = 0).
  void write_columns(const std::string& name, hsize_t k, hsize_t n, hsize_t row, const double* data, hsize_t begin,
                     hsize_t count);
  // The rows a series holds (0 when it has none yet); a reopened run goes on from there.
  hsize_t rows(const std::string& name);

 private:
  friend class RunFile;
  RunGroup(RunFile& file, std::string name) : file_(&file), name_(std::move(name)) {}
  hid_t series(const std::string& name, OutputType type, const std::vector<hsize_t>& row_dims);
  RunFile* file_;
  std::string name_;
};

class RunFile {
 public:
  // Creates (truncates) path with status running and empty series.
  static RunFile create(const std::string& path, MPI_Comm comm, const RunInfo& info);
  // Reopens a run file restored from a checkpoint: every series goes on from the rows it holds.
  static RunFile reopen(const std::string& path, MPI_Comm comm);

  void write_diagnostics(const DiagnosticsRow& row);
  // Collective: this rank's rows [begin, begin + count) of the N x d tokens.
  void write_snapshot(std::int64_t layer, double time, const double* x_local, std::int64_t begin, std::int64_t count);
  // A fixed dataset under /diagnostics (e.g. histogram bin edges), written once.
  void write_diagnostics_constant(const std::string& name, const std::vector<double>& values);
  void set_diagnostics_attribute(const std::string& name, double value);
  void set_diagnostics_attribute(const std::string& name, const std::string& value);

  // A group of results (/<name>/*), created with its first write (found again after a restart).
  RunGroup group(const std::string& name) { return RunGroup(*this, name); }

  // Sets end_time too unless running; checkpointed and complete also describe every dataset.
  void set_status(const std::string& status);
  void set_attribute(const std::string& name, const std::string& value);
  void flush();
  void close();

  hsize_t diagnostics_rows() const { return diagnostics_rows_; }
  hsize_t snapshot_rows() const { return snapshot_rows_; }

 private:
  friend class RunGroup;
  RunFile(MPI_Comm comm) : comm_(comm) {}
  hid_t study_group(const std::string& name);
  // A series of a group, checked against the declarations when it is first used (then kept open).
  hid_t study_series(const std::string& group, const std::string& name, OutputType type,
                     const std::vector<hsize_t>& row_dims);
  hid_t series(const std::string& name, hid_t type, const std::vector<hsize_t>& row_dims);
  hid_t diagnostics_group();  // created on first use: a study without diagnostics has no empty group
  void describe();            // io/outputs.hpp; names what no declaration covers

  MPI_Comm comm_;
  int rank_ = 0;
  h5::Handle file_, tokens_, diagnostics_;
  std::map<std::string, h5::Handle> series_;  // diagnostics series by name
  std::map<std::string, h5::Handle> studies_;  // study groups by name
  std::map<std::string, h5::Handle> study_series_;  // "group/name"
  h5::Handle snap_x_, snap_layer_, snap_time_;
  hsize_t diagnostics_rows_ = 0, snapshot_rows_ = 0;
};

// The PETSc/SLEPc options database as text ("-eps_nev 4 -log_view"): what the run's PETSc objects read.
std::string petsc_options_text();
// Every key of the deck as a root attribute of file, typed: integers int64, reals double (text for the word of
// a real key that takes one, ecd.F0 = auto), booleans int64 0/1, text and choices strings.
void write_parameters(hid_t file, const Deck& deck);

// The row of record k in a series stored at every `every`-th record and the last of records 0..R (every = 0:
// the first and the last), or -1 when record k is not stored (markov's weights, train's parameters).
std::int64_t stored_record_row(std::int64_t k, std::int64_t every, std::int64_t records);

// Local time as ISO-8601 text, taken on rank 0 and shared.
std::string now_iso8601(MPI_Comm comm);

}  // namespace tokdyn
