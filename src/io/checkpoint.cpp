#include "tokdyn/io/checkpoint.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/version.hpp"

namespace tokdyn {
namespace {
constexpr const char* kFormat = "tokdyn-checkpoint-2";
}

void rename_collectively(const std::string& from, const std::string& to, MPI_Comm comm) {
  int rank = 0, rc = 0, err = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Barrier(comm));
  if (rank == 0) {
    rc = std::rename(from.c_str(), to.c_str());
    err = errno;
  }
  int status[2] = {rc, err};
  TOKDYN_MPI_CHECK(MPI_Bcast(status, 2, MPI_INT, 0, comm));
  if (status[0] != 0) throw InputError("cannot rename '" + from + "' to '" + to + "': " + std::strerror(status[1]));
}

void remove_collectively(const std::string& path, MPI_Comm comm) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Barrier(comm));
  if (rank == 0) std::remove(path.c_str());
  TOKDYN_MPI_CHECK(MPI_Barrier(comm));
}

CheckpointWriter::CheckpointWriter(const std::string& path, MPI_Comm comm, const CheckpointIdentity& id) : comm_(comm) {
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  file_ = h5::create_file(path, comm);
  h5::write_attribute(file_, "format", std::string(kFormat));
  h5::write_attribute(file_, "tokdyn_version", std::string(version_string()));
  h5::write_attribute(file_, "git_revision", std::string(git_revision()));
  h5::write_attribute(file_, "command", id.command);
  h5::write_attribute(file_, "run_id", id.run_id);
  h5::write_attribute(file_, "output", id.output);
  h5::write_attribute(file_, "checkpoint", id.checkpoint);
  h5::write_attribute(file_, "deck", id.deck);
  h5::write_attribute(file_, "deck_hash", id.deck_hash);
  h5::write_attribute(file_, "unit", id.unit);
  h5::write_attribute(file_, "written", id.written);
  h5::write_attribute(file_, "step", id.step);
  h5::write_attribute(file_, "steps", id.steps);
  h5::write_attribute(file_, "ranks", static_cast<std::int64_t>(id.ranks));
  h5::write_attribute(file_, "inputs", id.inputs);
  state_ = h5::create_group(file_, "state");
}

void CheckpointWriter::rows(const std::string& name, const double* local, const Partition& p, int width) {
  h5::Handle d = h5::create_dataset(state_, name, H5T_IEEE_F64LE, {hsize_t(p.n_global), hsize_t(width)});
  h5::write_slab(d, H5T_NATIVE_DOUBLE, local, p.begin(rank_), p.count(rank_));
}

void CheckpointWriter::values(const std::string& name, const std::vector<double>& v) {
  h5::write_vector(state_, name, v, comm_);
}

void CheckpointWriter::integers(const std::string& name, const std::vector<std::int64_t>& v) {
  h5::Handle d = h5::create_dataset(state_, name, H5T_STD_I64LE, {hsize_t(v.size())});
  h5::write_slab(d, H5T_NATIVE_INT64, v.data(), 0, rank_ == 0 ? v.size() : 0);
}

void CheckpointWriter::attribute(const std::string& name, std::int64_t value) { h5::write_attribute(state_, name, value); }
void CheckpointWriter::attribute(const std::string& name, double value) { h5::write_attribute(state_, name, value); }
void CheckpointWriter::attribute(const std::string& name, const std::string& value) {
  h5::write_attribute(state_, name, value);
}

void CheckpointWriter::run_file(const std::string& path) { h5::store_file_bytes(file_, "run_file", path, comm_); }

void CheckpointWriter::close() {
  // "complete" is written last: a checkpoint without it was cut short.
  h5::write_attribute(file_, "complete", std::int64_t(1));
  state_.close();
  file_.close();
}

CheckpointReader::CheckpointReader(const std::string& path, MPI_Comm comm) : path_(path), comm_(comm) {
  file_ = h5::open_input_file(path, comm, "checkpoint");
  const bool ours = h5::has_attribute(file_, "format") && h5::read_string_attribute(file_, "format") == kFormat;
  if (!ours) {
    const bool older = h5::has_attribute(file_, "format") &&
                       h5::read_string_attribute(file_, "format").rfind("tokdyn-checkpoint", 0) == 0;
    throw InputError("'" + path + "' is not a tokdyn checkpoint" +
                     (older ? " of this version (it was written by an older tokdyn, without the run file: start the run again)"
                            : ""));
  }
  if (!h5::has_attribute(file_, "complete")) throw InputError("checkpoint '" + path + "' is incomplete (cut short)");
  try {
    read_identity();
  } catch (const InputError& e) {
    throw InputError("checkpoint '" + path + "' is damaged: " + e.what());
  }
  if (!h5::exists(file_, "state") || !h5::exists(file_, "run_file"))
    throw InputError("checkpoint '" + path + "' is damaged: it has no state or no run file");
  state_ = h5::open_input_group(file_, "state", "checkpoint", path);
  // The run file's bytes: uint8 [bytes], what restore_run_file copies out.
  h5::Handle bytes = h5::open_input_dataset(file_, "run_file", "checkpoint", path);
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Dget_type(bytes)));
  if (h5::dims(bytes).size() != 1 || H5Tget_class(type) != H5T_INTEGER || H5Tget_size(type) != 1)
    throw InputError("checkpoint '" + path + "' is damaged: its run file is not an array of bytes");
}

void CheckpointReader::read_identity() {
  CheckpointIdentity& id = identity_;
  id.command = h5::read_string_attribute(file_, "command");
  id.run_id = h5::read_string_attribute(file_, "run_id");
  id.output = h5::read_string_attribute(file_, "output");
  id.checkpoint = h5::read_string_attribute(file_, "checkpoint");
  id.deck = h5::read_string_attribute(file_, "deck");
  id.deck_hash = h5::read_string_attribute(file_, "deck_hash");
  id.unit = h5::read_string_attribute(file_, "unit");
  id.written = h5::read_string_attribute(file_, "written");
  id.step = h5::read_int_attribute(file_, "step");
  id.steps = h5::read_int_attribute(file_, "steps");
  id.ranks = static_cast<int>(h5::read_int_attribute(file_, "ranks"));
  if (h5::has_attribute(file_, "inputs")) id.inputs = h5::read_string_attribute(file_, "inputs");
  if (id.steps < 1 || id.step < 0 || id.step > id.steps || id.ranks < 1)
    throw InputError("step " + std::to_string(id.step) + " of " + std::to_string(id.steps) + " on " +
                     std::to_string(id.ranks) + " ranks");
}

void CheckpointReader::rows(const std::string& name, double* local, const Partition& p, int width) const {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank));
  if (!h5::exists(state_, name)) throw InputError("checkpoint '" + path_ + "' has no state '" + name + "'");
  h5::Handle d = h5::open_input_dataset(state_, name, "checkpoint", path_);
  const auto shape = h5::dims(d);
  if (shape.size() != 2 || shape[0] != hsize_t(p.n_global) || shape[1] != hsize_t(width)) {
    std::string got;
    for (hsize_t s : shape) got += (got.empty() ? "" : ", ") + std::to_string(s);
    throw InputError("checkpoint '" + path_ + "': state '" + name + "' has shape [" + got + "], this run has [" +
                     std::to_string(p.n_global) + ", " + std::to_string(width) + "]");
  }
  h5::read_slab(d, H5T_NATIVE_DOUBLE, local, p.begin(rank), p.count(rank));
}

namespace {
// A state dataset of numbers, or InputError naming it.
h5::Handle numeric_state(hid_t state, const std::string& name, const std::string& path) {
  if (!h5::exists(state, name)) throw InputError("checkpoint '" + path + "' has no state '" + name + "'");
  h5::Handle d = h5::open_input_dataset(state, name, "checkpoint", path);
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Dget_type(d)));
  const H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    throw InputError("checkpoint '" + path + "' is damaged: state '" + name + "' does not hold numbers");
  return d;
}
}  // namespace

std::vector<double> CheckpointReader::values(const std::string& name) const {
  h5::Handle d = numeric_state(state_, name, path_);
  hsize_t n = 1;
  for (hsize_t k : h5::dims(d)) n *= k;
  std::vector<double> v(n);
  if (n) TOKDYN_H5(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()));
  return v;
}

std::vector<std::int64_t> CheckpointReader::integers(const std::string& name) const {
  h5::Handle d = numeric_state(state_, name, path_);
  hsize_t n = 1;
  for (hsize_t k : h5::dims(d)) n *= k;
  std::vector<std::int64_t> v(n);
  if (!v.empty()) TOKDYN_H5(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()));
  return v;
}

namespace {
template <class T>
std::vector<T> sized(std::vector<T> v, std::size_t expected, const std::string& path, const std::string& name) {
  if (v.size() != expected)
    throw InputError("checkpoint '" + path + "' is damaged: state '" + name + "' has " + std::to_string(v.size()) +
                     " values, this run needs " + std::to_string(expected));
  return v;
}
}  // namespace

std::vector<double> CheckpointReader::values(const std::string& name, std::size_t expected) const {
  return sized(values(name), expected, path_, name);
}
std::vector<std::int64_t> CheckpointReader::integers(const std::string& name, std::size_t expected) const {
  return sized(integers(name), expected, path_, name);
}

bool CheckpointReader::has(const std::string& name) const {
  return h5::exists(state_, name) || h5::has_attribute(state_, name);
}
std::int64_t CheckpointReader::int_attribute(const std::string& name) const {
  return h5::read_int_attribute(state_, name);
}
double CheckpointReader::real_attribute(const std::string& name) const {
  return h5::read_double_attribute(state_, name);
}
std::string CheckpointReader::text_attribute(const std::string& name) const {
  return h5::read_string_attribute(state_, name);
}

void CheckpointReader::restore_run_file(const std::string& path) const {
  h5::Handle d = h5::open_input_dataset(file_, "run_file", "checkpoint", path_);
  const std::string tmp = path + ".tmp";
  h5::restore_file_bytes(d, tmp, comm_);
  rename_collectively(tmp, path, comm_);
}

}  // namespace tokdyn
