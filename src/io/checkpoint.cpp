#include "tokdyn/io/checkpoint.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tokdyn/core/error.hpp"
#include "tokdyn/core/version.hpp"

namespace tokdyn {
namespace {
constexpr const char* kFormat = "tokdyn-checkpoint-1";
}

void rename_collectively(const std::string& from, const std::string& to, MPI_Comm comm) {
  int rank = 0, rc = 0, err = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Barrier(comm));
  if (rank == 0) {
    rc = std::rename(from.c_str(), to.c_str());
    err = errno;
  }
  TOKDYN_MPI_CHECK(MPI_Bcast(&rc, 1, MPI_INT, 0, comm));
  TOKDYN_MPI_CHECK(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  if (rc != 0) throw InputError("cannot rename '" + from + "' to '" + to + "': " + std::strerror(err));
}

void remove_collectively(const std::string& path, MPI_Comm comm) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Barrier(comm));
  if (rank == 0) std::remove(path.c_str());
  TOKDYN_MPI_CHECK(MPI_Barrier(comm));
}

void write_checkpoint(const std::string& path, MPI_Comm comm, const CheckpointInfo& info, const double* x_local,
                      const Partition& partition) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::string tmp = path + ".tmp";
  {
    h5::Handle file = h5::create_file(tmp, comm);
    h5::write_attribute(file, "format", std::string(kFormat));
    h5::write_attribute(file, "tokdyn_version", std::string(version_string()));
    h5::write_attribute(file, "command", info.command);
    h5::write_attribute(file, "deck", info.deck_text);
    h5::write_attribute(file, "run_file", info.run_file);
    h5::write_attribute(file, "layer", info.layer);
    h5::write_attribute(file, "diagnostics_rows", static_cast<std::int64_t>(info.diagnostics_rows));
    h5::write_attribute(file, "snapshot_rows", static_cast<std::int64_t>(info.snapshot_rows));
    h5::write_attribute(file, "ranks", static_cast<std::int64_t>(info.ranks));
    h5::write_attribute(file, "counter", info.counter);
    h5::Handle x = h5::create_dataset(file, "X", H5T_IEEE_F64LE, {hsize_t(info.n), hsize_t(info.d)});
    h5::write_slab(x, H5T_NATIVE_DOUBLE, x_local, partition.begin(rank), partition.count(rank));
    // "complete" is written last: a checkpoint without it was cut short.
    h5::write_attribute(file, "complete", std::int64_t(1));
    x.close();
    file.close();
  }
  rename_collectively(tmp, path, comm);
}

CheckpointInfo read_checkpoint_info(const std::string& path, MPI_Comm comm) {
  if (!h5::is_hdf5_file(path)) throw InputError("checkpoint '" + path + "' is missing or not an HDF5 file");
  h5::Handle file = h5::open_file(path, comm, false);
  if (!h5::has_attribute(file, "format") || h5::read_string_attribute(file, "format") != kFormat)
    throw InputError("'" + path + "' is not a tokdyn checkpoint");
  if (!h5::has_attribute(file, "complete")) throw InputError("checkpoint '" + path + "' is incomplete");
  CheckpointInfo info;
  info.command = h5::read_string_attribute(file, "command");
  info.deck_text = h5::read_string_attribute(file, "deck");
  info.run_file = h5::read_string_attribute(file, "run_file");
  info.layer = h5::read_int_attribute(file, "layer");
  info.diagnostics_rows = h5::read_int_attribute(file, "diagnostics_rows");
  info.snapshot_rows = h5::read_int_attribute(file, "snapshot_rows");
  info.ranks = static_cast<int>(h5::read_int_attribute(file, "ranks"));
  info.counter = h5::has_attribute(file, "counter") ? h5::read_int_attribute(file, "counter") : 0;
  if (!h5::exists(file, "X")) throw InputError("checkpoint '" + path + "' has no token state X");
  h5::Handle x = h5::open_dataset(file, "X");
  const auto shape = h5::dims(x);
  if (shape.size() != 2) throw InputError("checkpoint '" + path + "': X is not a 2-D dataset");
  info.n = static_cast<std::int64_t>(shape[0]);
  info.d = static_cast<int>(shape[1]);
  return info;
}

void read_checkpoint_tokens(const std::string& path, MPI_Comm comm, const Partition& partition, int d,
                            double* x_local) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  h5::Handle file = h5::open_file(path, comm, false);
  h5::Handle x = h5::open_dataset(file, "X");
  const auto shape = h5::dims(x);
  if (shape.size() != 2 || shape[0] != hsize_t(partition.n_global) || shape[1] != hsize_t(d))
    throw InputError("checkpoint '" + path + "': X has the wrong shape for this deck");
  h5::read_slab(x, H5T_NATIVE_DOUBLE, x_local, partition.begin(rank), partition.count(rank));
}

}  // namespace tokdyn
