#include "tokdyn/io/run_file.hpp"

#include <petscsys.h>

#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/phases.hpp"
#include "tokdyn/core/console/version.hpp"

namespace tokdyn {
namespace {

// What every run file holds (io/outputs.hpp): its header, the token snapshots and the diagnostics series.
// The diagnostics are one group for every command; each entry says which commands write it.
constexpr OutputDecl kRunFileOutputs[] = {
#include "run_file_outputs.inc"
};
const DeclaredOutputs kRunFileDeclared("every command", kRunFileOutputs);

OutputType output_type(double) { return OutputType::real; }
OutputType output_type(std::int64_t) { return OutputType::integer; }
OutputType output_type(const std::string&) { return OutputType::text; }

// An attribute of obj at the declared path `path` (its type checked against the declaration).
template <class T>
void declared_attribute(hid_t obj, const std::string& path, const std::string& name, const T& value) {
  require_output(path, output_type(value));
  h5::write_attribute(obj, name, value);
}

template <class T>
void root_attribute(hid_t file, const std::string& name, const T& value) {
  declared_attribute(file, "@" + name, name, value);
}

}  // namespace

std::string now_iso8601(MPI_Comm comm) {
  char buf[32] = {0};
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  TOKDYN_MPI_CHECK(MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, comm));
  return buf;
}

std::string petsc_options_text() {
  char* all = nullptr;
  PetscCallAbort(PETSC_COMM_SELF, PetscOptionsGetAll(nullptr, &all));
  std::string text = all ? all : "";
  PetscCallAbort(PETSC_COMM_SELF, PetscFree(all));
  return text;
}

void write_parameters(hid_t file, const Deck& deck) {
  for (const KeySpec& key : deck.schema().keys()) {
    switch (key.kind) {
      case KeyKind::integer: h5::write_attribute(file, key.name, deck.get_int(key.name)); break;
      case KeyKind::real:  // a word it takes (ecd.F0 = auto) as text
        if (deck.is_word(key.name))
          h5::write_attribute(file, key.name, deck.get_text(key.name));
        else
          h5::write_attribute(file, key.name, deck.get_real(key.name));
        break;
      case KeyKind::boolean: h5::write_attribute(file, key.name, std::int64_t(deck.get_bool(key.name))); break;
      case KeyKind::text:
      case KeyKind::choice: h5::write_attribute(file, key.name, deck.get_text(key.name)); break;
    }
  }
}

std::int64_t stored_record_row(std::int64_t k, std::int64_t every, std::int64_t records) {
  if (every > 0 && k % every == 0) return k / every;
  if (k == records) return every > 0 ? records / every + 1 : 1;
  return every == 0 && k == 0 ? 0 : -1;
}

RunFile RunFile::create(const std::string& path, MPI_Comm comm, const RunInfo& info) {
  RunFile f(comm);
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &f.rank_));
  int ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  f.file_ = h5::create_file(path, comm);
  root_attribute(f.file_, "tokdyn_version", std::string(version_string()));
  root_attribute(f.file_, "git_revision", std::string(git_revision()));
  root_attribute(f.file_, "command", info.command);
  root_attribute(f.file_, "deck", info.deck_text);
  root_attribute(f.file_, "seed", static_cast<std::int64_t>(info.seed));
  root_attribute(f.file_, "ranks", static_cast<std::int64_t>(ranks));
  root_attribute(f.file_, "rank_history", std::to_string(ranks));
  root_attribute(f.file_, "input_files", info.inputs);
  root_attribute(f.file_, "start_time", now_iso8601(comm));
  root_attribute(f.file_, "end_time", std::string());
  root_attribute(f.file_, "status", std::string("running"));
  root_attribute(f.file_, "run_id", info.run_id);
  root_attribute(f.file_, "petsc_options", petsc_options_text());
  if (info.deck) write_parameters(f.file_, *info.deck);
  if (info.n == 0) return f;  // a study or a mean-field run: no token trajectories
  f.tokens_ = h5::create_group(f.file_, "tokens");
  f.snap_x_ = h5::create_series(f.tokens_, "X", H5T_IEEE_F64LE, {hsize_t(info.n), hsize_t(info.d)});
  f.snap_layer_ = h5::create_series(f.tokens_, "layer", H5T_STD_I64LE, {});
  f.snap_time_ = h5::create_series(f.tokens_, "time", H5T_IEEE_F64LE, {});
  return f;
}

RunFile RunFile::reopen(const std::string& path, MPI_Comm comm) {
  RunFile f(comm);
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &f.rank_));
  f.file_ = h5::open_file(path, comm, true);
  if (h5::exists(f.file_, "tokens")) {  // a study keeps no token snapshots
    f.tokens_ = h5::open_group(f.file_, "tokens");
    f.snap_x_ = h5::open_dataset(f.tokens_, "X");
    f.snap_layer_ = h5::open_dataset(f.tokens_, "layer");
    f.snap_time_ = h5::open_dataset(f.tokens_, "time");
    f.snapshot_rows_ = h5::dims(f.snap_layer_)[0];
  }
  // Every series of /diagnostics (constants aside); the file is the checkpoint's copy, so its rows are the
  // rows written up to the checkpoint's step.
  if (h5::exists(f.file_, "diagnostics")) f.diagnostics_ = h5::open_group(f.file_, "diagnostics");
  H5G_info_t info{};
  if (f.diagnostics_.id() >= 0) TOKDYN_H5(H5Gget_info(f.diagnostics_, &info));
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char name[256];
    TOKDYN_H5(H5Lget_name_by_idx(f.diagnostics_, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT));
    h5::Handle d = h5::open_dataset(f.diagnostics_, name);
    if (h5::has_attribute(d, "constant")) continue;
    f.series_[name] = std::move(d);
  }
  f.diagnostics_rows_ = f.series_.count("layer") ? h5::dims(f.series_.at("layer"))[0] : 0;
  int ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  root_attribute(f.file_, "ranks", static_cast<std::int64_t>(ranks));  // of the run that finishes it
  // Every continuation's rank count: a run continued on another count is equal to round-off only.
  const std::string history =
      h5::has_attribute(f.file_, "rank_history") ? h5::read_string_attribute(f.file_, "rank_history") : "";
  root_attribute(f.file_, "rank_history", (history.empty() ? "" : history + ",") + std::to_string(ranks));
  f.set_status("running");
  return f;
}

hid_t RunFile::series(const std::string& name, hid_t type, const std::vector<hsize_t>& row_dims) {
  auto it = series_.find(name);
  if (it != series_.end()) return it->second;
  require_output("diagnostics/" + name, H5Tequal(type, H5T_STD_I64LE) > 0 ? OutputType::integer : OutputType::real);
  h5::Handle d = h5::create_series(diagnostics_group(), name, type, row_dims);
  if (diagnostics_rows_ > 0) h5::set_series_rows(d, diagnostics_rows_);  // a late observable: earlier rows are fill
  return series_.emplace(name, std::move(d)).first->second;
}

hid_t RunFile::diagnostics_group() {
  if (diagnostics_.id() < 0) diagnostics_ = h5::create_group(file_, "diagnostics");
  return diagnostics_;
}

void RunFile::write_diagnostics(const DiagnosticsRow& row) {
  PhaseScope timed(Phase::output);
  const hsize_t r = diagnostics_rows_;
  const hsize_t mine = rank_ == 0 ? 1 : 0;  // one writer per value, every rank in the collective call
  h5::write_series_row(series("layer", H5T_STD_I64LE, {}), r, H5T_NATIVE_INT64, &row.layer, 0, mine);
  h5::write_series_row(series("time", H5T_IEEE_F64LE, {}), r, H5T_NATIVE_DOUBLE, &row.time, 0, mine);
  for (const auto& [name, value] : row.scalars)
    h5::write_series_row(series(name, H5T_IEEE_F64LE, {}), r, H5T_NATIVE_DOUBLE, &value, 0, mine);
  for (const auto& [name, counts] : row.counts) {
    const hsize_t bins = counts.size();
    h5::write_series_row(series(name, H5T_STD_I64LE, {bins}), r, H5T_NATIVE_INT64, counts.data(), 0,
                         mine ? bins : 0);
  }
  diagnostics_rows_ = r + 1;
}

void RunFile::write_snapshot(std::int64_t layer, double time, const double* x_local, std::int64_t begin,
                             std::int64_t count) {
  PhaseScope timed(Phase::output);
  const hsize_t r = snapshot_rows_, mine = rank_ == 0 ? 1 : 0;
  h5::write_series_row(snap_x_, r, H5T_NATIVE_DOUBLE, x_local, begin, count);
  h5::write_series_row(snap_layer_, r, H5T_NATIVE_INT64, &layer, 0, mine);
  h5::write_series_row(snap_time_, r, H5T_NATIVE_DOUBLE, &time, 0, mine);
  snapshot_rows_ = r + 1;
}

void RunFile::write_diagnostics_constant(const std::string& name, const std::vector<double>& values) {
  require_output("diagnostics/" + name, OutputType::real);
  h5::Handle d = h5::create_dataset(diagnostics_group(), name, H5T_IEEE_F64LE, {hsize_t(values.size())});
  h5::write_slab(d, H5T_NATIVE_DOUBLE, values.data(), 0, rank_ == 0 ? values.size() : 0);
  declared_attribute(d, "diagnostics/" + name + "@constant", "constant", std::int64_t(1));
}

void RunFile::set_diagnostics_attribute(const std::string& name, double value) {
  declared_attribute(diagnostics_group(), "diagnostics@" + name, name, value);
}

void RunFile::set_diagnostics_attribute(const std::string& name, const std::string& value) {
  declared_attribute(diagnostics_group(), "diagnostics@" + name, name, value);
}

hid_t RunFile::study_group(const std::string& name) {
  auto it = studies_.find(name);
  if (it != studies_.end()) return it->second;
  // A reopened run finds its study group in the file.
  return studies_.emplace(name, h5::exists(file_, name) ? h5::open_group(file_, name) : h5::create_group(file_, name))
      .first->second;
}

hid_t RunFile::study_series(const std::string& group, const std::string& name, OutputType type,
                            const std::vector<hsize_t>& row_dims) {
  const std::string key = group + "/" + name;
  auto it = study_series_.find(key);
  if (it != study_series_.end()) return it->second;  // checked when first written: a row costs no lookup
  require_output(key, type);
  const hid_t g = study_group(group);
  h5::Handle d = h5::exists(g, name) ? h5::open_dataset(g, name)
                                     : h5::create_series(g, name, type == OutputType::integer ? H5T_STD_I64LE
                                                                                              : H5T_IEEE_F64LE,
                                                         row_dims);
  return study_series_.emplace(key, std::move(d)).first->second;
}

hid_t RunGroup::series(const std::string& name, OutputType type, const std::vector<hsize_t>& row_dims) {
  return file_->study_series(name_, name, type, row_dims);
}

void RunGroup::write(const std::string& name, const std::vector<double>& values, const std::vector<hsize_t>& shape) {
  require_output(name_ + "/" + name, OutputType::real);
  h5::write_vector(file_->study_group(name_), name, values, file_->comm_, shape);
}

void RunGroup::write_integers(const std::string& name, const std::vector<std::int64_t>& values,
                              const std::vector<hsize_t>& shape) {
  require_output(name_ + "/" + name, OutputType::integer);
  h5::Handle d = h5::create_dataset(file_->study_group(name_), name, H5T_STD_I64LE,
                                    shape.empty() ? std::vector<hsize_t>{hsize_t(values.size())} : shape);
  const hsize_t rows = shape.empty() ? values.size() : shape[0];
  h5::write_slab(d, H5T_NATIVE_INT64, values.data(), 0, file_->rank_ == 0 ? rows : 0);
}

namespace {

// "name" is an attribute of the group, "dataset@name" one of a dataset of the group.
template <class T>
void group_attribute(hid_t group, const std::string& group_name, const std::string& name, const T& value) {
  const auto at = name.find('@');
  if (at == std::string::npos) return declared_attribute(group, group_name + "@" + name, name, value);
  require_output(group_name + "/" + name, output_type(value));
  h5::write_attribute(h5::open_dataset(group, name.substr(0, at)), name.substr(at + 1), value);
}

}  // namespace

void RunGroup::attribute(const std::string& name, double value) {
  group_attribute(file_->study_group(name_), name_, name, value);
}
void RunGroup::attribute(const std::string& name, std::int64_t value) {
  group_attribute(file_->study_group(name_), name_, name, value);
}
void RunGroup::attribute(const std::string& name, const std::string& value) {
  group_attribute(file_->study_group(name_), name_, name, value);
}

void RunGroup::write_row(const std::string& name, const std::vector<hsize_t>& row_dims, hsize_t row,
                         const double* data, hsize_t begin, hsize_t count) {
  h5::write_series_row(series(name, OutputType::real, row_dims), row, H5T_NATIVE_DOUBLE, data, begin, count);
}

void RunGroup::write_row(const std::string& name, const std::vector<hsize_t>& row_dims, hsize_t row,
                         const std::int64_t* data, hsize_t begin, hsize_t count) {
  h5::write_series_row(series(name, OutputType::integer, row_dims), row, H5T_NATIVE_INT64, data, begin, count);
}

void RunGroup::write_columns(const std::string& name, hsize_t k, hsize_t n, hsize_t row, const double* data,
                             hsize_t begin, hsize_t count) {
  h5::write_series_columns(series(name, OutputType::real, {k, n}), row, k, data, begin, count);
}

hsize_t RunGroup::rows(const std::string& name) {
  const hid_t g = file_->study_group(name_);
  return h5::exists(g, name) ? h5::dims(h5::open_dataset(g, name))[0] : 0;
}

void RunFile::set_status(const std::string& status) {
  if (status == "checkpointed" || status == "complete") describe();
  root_attribute(file_, "status", status);
  root_attribute(file_, "end_time", status == "running" ? std::string() : now_iso8601(comm_));
}

void RunFile::describe() {
  // Every write is checked against the declarations, so a dataset nothing declares is a tokdyn bug.
  const std::vector<std::string> missing = describe_datasets(file_);
  if (!missing.empty())
    throw std::logic_error("run file: dataset '" + missing.front() + "' is not declared (io/outputs.hpp)");
}

void RunFile::set_attribute(const std::string& name, const std::string& value) {
  root_attribute(file_, name, value);
}

void RunFile::flush() {
  PhaseScope timed(Phase::output);
  TOKDYN_H5(H5Fflush(file_, H5F_SCOPE_GLOBAL));
}

void RunFile::close() {
  // Children before the file: reverse order of creation.
  study_series_.clear();
  studies_.clear();
  series_.clear();
  snap_time_.close();
  snap_layer_.close();
  snap_x_.close();
  diagnostics_.close();
  tokens_.close();
  file_.close();
}

RunFileHeader read_run_file_header(hid_t file) {
  RunFileHeader h;
  const std::pair<const char*, std::string*> texts[] = {
      {"command", &h.command}, {"deck", &h.deck}, {"tokdyn_version", &h.tokdyn_version},
      {"git_revision", &h.git_revision}, {"status", &h.status}, {"error", &h.error}, {"run_id", &h.run_id},
      {"petsc_options", &h.petsc_options}, {"rank_history", &h.rank_history}, {"input_files", &h.input_files}};
  for (const auto& [name, value] : texts)
    if (h5::has_attribute(file, name)) *value = h5::read_string_attribute(file, name);
  if (h5::has_attribute(file, "ranks")) h.ranks = h5::read_int_attribute(file, "ranks");
  for (const char* name : {"command", "deck", "tokdyn_version", "git_revision", "status", "ranks"})
    if (h.missing.empty() && !h5::has_attribute(file, name)) h.missing = name;
  return h;
}

}  // namespace tokdyn
