#include "tokdyn/io/run_file.hpp"

#include <petscsys.h>

#include <cstdio>
#include <ctime>

#include "tokdyn/core/deck.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/phases.hpp"
#include "tokdyn/core/version.hpp"
#include "tokdyn/io/dataset_descriptions.hpp"

namespace tokdyn {

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
      case KeyKind::real: h5::write_attribute(file, key.name, deck.get_real(key.name)); break;
      case KeyKind::boolean: h5::write_attribute(file, key.name, std::int64_t(deck.get_bool(key.name))); break;
      case KeyKind::text:
      case KeyKind::choice: h5::write_attribute(file, key.name, deck.get_text(key.name)); break;
    }
  }
}

RunFile RunFile::create(const std::string& path, MPI_Comm comm, const RunInfo& info) {
  RunFile f(comm);
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &f.rank_));
  int ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  f.file_ = h5::create_file(path, comm);
  h5::write_attribute(f.file_, "tokdyn_version", std::string(version_string()));
  h5::write_attribute(f.file_, "git_revision", std::string(git_revision()));
  h5::write_attribute(f.file_, "command", info.command);
  h5::write_attribute(f.file_, "deck", info.deck_text);
  h5::write_attribute(f.file_, "seed", static_cast<std::int64_t>(info.seed));
  h5::write_attribute(f.file_, "ranks", static_cast<std::int64_t>(ranks));
  h5::write_attribute(f.file_, "rank_history", std::to_string(ranks));
  h5::write_attribute(f.file_, "input_files", info.inputs);
  h5::write_attribute(f.file_, "start_time", now_iso8601(comm));
  h5::write_attribute(f.file_, "end_time", std::string());
  h5::write_attribute(f.file_, "status", std::string("running"));
  h5::write_attribute(f.file_, "run_id", info.run_id);
  h5::write_attribute(f.file_, "petsc_options", petsc_options_text());
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
  h5::write_attribute(f.file_, "ranks", static_cast<std::int64_t>(ranks));  // of the run that finishes it
  // Every continuation's rank count: a run continued on another count is equal to round-off only.
  const std::string history =
      h5::has_attribute(f.file_, "rank_history") ? h5::read_string_attribute(f.file_, "rank_history") : "";
  h5::write_attribute(f.file_, "rank_history", (history.empty() ? "" : history + ",") + std::to_string(ranks));
  f.set_status("running");
  return f;
}

hid_t RunFile::series(const std::string& name, hid_t type, const std::vector<hsize_t>& row_dims) {
  auto it = series_.find(name);
  if (it != series_.end()) return it->second;
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
  h5::Handle d = h5::create_dataset(diagnostics_group(), name, H5T_IEEE_F64LE, {hsize_t(values.size())});
  h5::write_slab(d, H5T_NATIVE_DOUBLE, values.data(), 0, rank_ == 0 ? values.size() : 0);
  h5::write_attribute(d, "constant", std::int64_t(1));
}

void RunFile::set_diagnostics_attribute(const std::string& name, double value) {
  h5::write_attribute(diagnostics_group(), name, value);
}

void RunFile::set_diagnostics_attribute(const std::string& name, const std::string& value) {
  h5::write_attribute(diagnostics_group(), name, value);
}

hid_t RunFile::study_group(const std::string& name) {
  auto it = studies_.find(name);
  if (it != studies_.end()) return it->second;
  // A reopened run finds its study group in the file.
  return studies_.emplace(name, h5::exists(file_, name) ? h5::open_group(file_, name) : h5::create_group(file_, name))
      .first->second;
}

hid_t RunFile::study_series(const std::string& group, const std::string& name, hid_t type,
                            const std::vector<hsize_t>& row_dims) {
  const std::string key = group + "/" + name;
  auto it = study_series_.find(key);
  if (it != study_series_.end()) return it->second;
  const hid_t g = study_group(group);
  h5::Handle d = h5::exists(g, name) ? h5::open_dataset(g, name) : h5::create_series(g, name, type, row_dims);
  return study_series_.emplace(key, std::move(d)).first->second;
}

void RunFile::set_status(const std::string& status) {
  if (status == "checkpointed" || status == "complete") describe();
  h5::write_attribute(file_, "status", status);
  h5::write_attribute(file_, "end_time", status == "running" ? std::string() : now_iso8601(comm_));
}

void RunFile::describe() {
  const std::vector<std::string> missing = describe_datasets(file_);
  // A dataset the table lacks is a tokdyn bug, not the user's: the run's results stand, the file says so.
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    h5::write_attribute(file_, "undescribed_datasets", list);
    if (rank_ == 0) std::fprintf(stderr, "tokdyn: warning: datasets without a description (please report): %s\n", list.c_str());
  }
}

void RunFile::set_attribute(const std::string& name, const std::string& value) {
  h5::write_attribute(file_, name, value);
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
