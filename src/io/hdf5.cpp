#include "tokdyn/io/hdf5.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <sstream>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn::h5 {
namespace {

herr_t collect_message(unsigned n, const H5E_error2_t* err, void* data) {
  auto* text = static_cast<std::string*>(data);
  if (err->desc && *err->desc) *text = err->desc;  // keep the innermost (last walked) description
  return 0;
}

Handle vlen_string_type() {
  Handle t = make_type_handle(TOKDYN_H5(H5Tcopy(H5T_C_S1)));
  TOKDYN_H5(H5Tset_size(t, H5T_VARIABLE));
  TOKDYN_H5(H5Tset_cset(t, H5T_CSET_UTF8));
  return t;
}

Handle scalar_space() { return make_space_handle(TOKDYN_H5(H5Screate(H5S_SCALAR))); }

Handle fresh_attribute(hid_t obj, const std::string& name, hid_t type) {
  if (TOKDYN_H5(H5Aexists(obj, name.c_str())) > 0) TOKDYN_H5(H5Adelete(obj, name.c_str()));
  Handle space = scalar_space();
  return make_attr_handle(TOKDYN_H5(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT)));
}

// Selects [begin, begin+count) of dimension 0 of `space` (row dims whole); count 0 selects nothing.
void select_rows(hid_t space, hsize_t begin, hsize_t count, int skip_dims = 0, hsize_t row = 0) {
  const int rank = TOKDYN_H5(H5Sget_simple_extent_ndims(space));
  std::vector<hsize_t> d(rank);
  TOKDYN_H5(H5Sget_simple_extent_dims(space, d.data(), nullptr));
  if (count == 0) {
    TOKDYN_H5(H5Sselect_none(space));
    return;
  }
  std::vector<hsize_t> start(rank, 0), cnt(d);
  if (skip_dims == 1) {  // a series row: fix dimension 0 at `row`
    start[0] = row;
    cnt[0] = 1;
  }
  if (skip_dims < rank) {
    start[skip_dims] = begin;
    cnt[skip_dims] = count;
  }
  TOKDYN_H5(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, cnt.data(), nullptr));
}

// Read or write of rows [begin, begin+count) of dimension skip_dims (with dimension 0 fixed at `row` when
// skip_dims == 1, for series); collective, or by this rank alone (a file opened without MPI-IO).
void transfer_slab(hid_t dataset, hid_t mem_type, void* data, hsize_t begin, hsize_t count, bool write,
                          int skip_dims, hsize_t row, bool collective = true) {
  std::vector<hsize_t> d = dims(dataset);
  // A dataset without elements has nothing to move, and HDF5 refuses even an empty selection of one
  // (an empty vector of a checkpoint: "can't write data"). Every rank sees the same shape.
  for (hsize_t n : d)
    if (n == 0) return;
  Handle file_space = make_space_handle(TOKDYN_H5(H5Dget_space(dataset)));
  select_rows(file_space, begin, count, skip_dims, row);
  std::vector<hsize_t> mem_dims(d.begin() + skip_dims, d.end());
  const hsize_t one = 1;
  if (!mem_dims.empty()) mem_dims[0] = count;
  Handle mem_space = make_space_handle(
      count && !mem_dims.empty() ? TOKDYN_H5(H5Screate_simple(static_cast<int>(mem_dims.size()), mem_dims.data(), nullptr))
                                 : TOKDYN_H5(H5Screate_simple(1, &one, nullptr)));
  if (!count) TOKDYN_H5(H5Sselect_none(mem_space));
  Handle dxpl = collective ? collective_transfer() : Handle();
  const hid_t plist = collective ? dxpl.id() : H5P_DEFAULT;
  if (write)
    TOKDYN_H5(H5Dwrite(dataset, mem_type, mem_space, file_space, plist, data));
  else
    TOKDYN_H5(H5Dread(dataset, mem_type, mem_space, file_space, plist, data));
}

}  // namespace

std::int64_t checked(std::int64_t value, const char* call, const char* file, int line) {
  if (value >= 0) return value;
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_message, &message);
  H5Eclear2(H5E_DEFAULT);
  throw_system_error("HDF5", call, file, line, message);
}

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    close();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}

Handle::~Handle() {
  if (std::uncaught_exceptions() > 0) return;  // unwinding: no collective close (see the header)
  close();
}

void Handle::close() {
  if (id_ >= 0 && closer_) closer_(id_);  // destructor path: nothing useful to do on failure
  id_ = -1;
}

Handle make_file_handle(hid_t id) { return Handle(id, H5Fclose); }
Handle make_group_handle(hid_t id) { return Handle(id, H5Gclose); }
Handle make_dataset_handle(hid_t id) { return Handle(id, H5Dclose); }
Handle make_space_handle(hid_t id) { return Handle(id, H5Sclose); }
Handle make_plist_handle(hid_t id) { return Handle(id, H5Pclose); }
Handle make_type_handle(hid_t id) { return Handle(id, H5Tclose); }
Handle make_attr_handle(hid_t id) { return Handle(id, H5Aclose); }

static Handle mpio_access(MPI_Comm comm) {
  Handle fapl = make_plist_handle(TOKDYN_H5(H5Pcreate(H5P_FILE_ACCESS)));
  TOKDYN_H5(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL));
  // Collective metadata keeps every rank's view of attributes and extents identical.
  TOKDYN_H5(H5Pset_all_coll_metadata_ops(fapl, true));
  TOKDYN_H5(H5Pset_coll_metadata_write(fapl, true));
  return fapl;
}

Handle create_file(const std::string& path, MPI_Comm comm) {
  Handle fapl = mpio_access(comm);
  return make_file_handle(TOKDYN_H5(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl)));
}

Handle open_file(const std::string& path, MPI_Comm comm, bool writable) {
  Handle fapl = mpio_access(comm);
  return make_file_handle(
      TOKDYN_H5(H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl)));
}

bool is_hdf5_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) return false;
  const htri_t r = H5Fis_hdf5(path.c_str());
  H5Eclear2(H5E_DEFAULT);
  return r > 0;
}

Handle open_input_file(const std::string& path, MPI_Comm comm, const std::string& what) {
  // Every rank looks for itself (a shared file system) and the answer is agreed before HDF5 opens it.
  require_all(comm, is_hdf5_file(path), what + " '" + path + "' is missing or not an HDF5 file");
  Handle fapl = mpio_access(comm);
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  std::string reason;
  if (id < 0) {
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_message, &reason);
    H5Eclear2(H5E_DEFAULT);
  }
  Handle file = make_file_handle(id);
  require_all(comm, id >= 0, what + " '" + path + "' is truncated or damaged: HDF5 cannot open it (" + reason + ")");
  return file;
}

Handle open_input_file_here(const std::string& path, const std::string& what) {
  if (!is_hdf5_file(path)) throw InputError(what + " '" + path + "' is missing or not an HDF5 file");
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    std::string reason;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_message, &reason);
    H5Eclear2(H5E_DEFAULT);
    throw InputError(what + " '" + path + "' is truncated or damaged: HDF5 cannot open it (" + reason + ")");
  }
  return make_file_handle(id);
}

namespace {
// The object at name (which exists) is of type `want`, or InputError naming it.
void require_type(hid_t parent, const std::string& name, H5O_type_t want, const std::string& what,
                  const std::string& path) {
  H5O_info_t info;
  TOKDYN_H5(H5Oget_info_by_name(parent, name.c_str(), &info, H5P_DEFAULT));
  if (info.type == want) return;
  const char* is = info.type == H5O_TYPE_GROUP ? "a group" : info.type == H5O_TYPE_DATASET ? "a dataset" : "a named type";
  throw InputError("'" + name + "' in " + what + " '" + path + "' is " + is + ", not a " +
                   (want == H5O_TYPE_GROUP ? "group" : "dataset"));
}
}  // namespace

Handle open_input_dataset(hid_t file, const std::string& name, const std::string& what, const std::string& path) {
  if (!exists(file, name)) throw InputError(what + " '" + path + "' has no dataset '" + name + "'");
  require_type(file, name, H5O_TYPE_DATASET, what, path);
  return open_dataset(file, name);
}

Handle open_input_group(hid_t file, const std::string& name, const std::string& what, const std::string& path) {
  if (!exists(file, name)) throw InputError(what + " '" + path + "' has no group '" + name + "'");
  require_type(file, name, H5O_TYPE_GROUP, what, path);
  return open_group(file, name);
}

namespace {
constexpr hsize_t kPiece = hsize_t(64) << 20;  // bytes a rank moves at once

// This rank's share [begin, begin + count) of n bytes, and how many pieces every rank loops over.
void byte_share(MPI_Comm comm, hsize_t n, hsize_t& begin, hsize_t& count, hsize_t& pieces) {
  int rank = 0, size = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &size));
  const hsize_t share = (n + size - 1) / size;
  begin = std::min(n, share * rank);
  count = std::min(n, begin + share) - begin;
  pieces = std::max<hsize_t>(1, (share + kPiece - 1) / kPiece);
}
}  // namespace

void store_file_bytes(hid_t parent, const std::string& name, const std::string& path, MPI_Comm comm) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  long long size = 0;
  if (rank == 0) {
    std::error_code ec;
    size = static_cast<long long>(std::filesystem::file_size(path, ec));
    if (ec) size = -1;
  }
  TOKDYN_MPI_CHECK(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, comm));
  if (size < 0) throw SystemError("cannot read the size of '" + path + "'");
  hsize_t begin = 0, count = 0, pieces = 1;
  byte_share(comm, static_cast<hsize_t>(size), begin, count, pieces);
  Handle d = create_dataset(parent, name, H5T_STD_U8LE, {static_cast<hsize_t>(size)});
  const int fd = ::open(path.c_str(), O_RDONLY);
  const int err = errno;
  require_all(comm, fd >= 0 || count == 0, "cannot open '" + path + "': " + std::strerror(err));
  std::vector<unsigned char> buffer(std::min(count, kPiece));
  bool ok = true;
  for (hsize_t p = 0; p < pieces; ++p) {
    const hsize_t at = std::min(count, p * kPiece), n = std::min(count, at + kPiece) - at;
    for (hsize_t done = 0; done < n && ok;) {
      const ssize_t got = ::pread(fd, buffer.data() + done, n - done, static_cast<off_t>(begin + at + done));
      if (got <= 0) ok = false;
      done += got > 0 ? static_cast<hsize_t>(got) : 0;
    }
    write_slab(d, H5T_NATIVE_UCHAR, buffer.data(), begin + at, n);
  }
  if (fd >= 0) ::close(fd);
  require_all(comm, ok, "cannot read '" + path + "'");
}

void restore_file_bytes(hid_t dataset, const std::string& path, MPI_Comm comm) {
  const hsize_t size = dims(dataset)[0];
  hsize_t begin = 0, count = 0, pieces = 1;
  byte_share(comm, size, begin, count, pieces);
  // MPI-IO reports failures per rank: every step is agreed before the next collective call.
  auto agree = [&](int rc, const char* doing) {
    int bad = rc != MPI_SUCCESS ? 1 : 0;
    TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
    if (bad) throw SystemError(std::string("cannot ") + doing + " '" + path + "'" +
                               (rc != MPI_SUCCESS ? ": " + mpi_error_string(rc) : std::string()));
  };
  MPI_File fh;
  agree(MPI_File_open(comm, path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "create");
  agree(MPI_File_set_size(fh, 0), "truncate");
  std::vector<unsigned char> buffer(std::min(count, kPiece));
  for (hsize_t p = 0; p < pieces; ++p) {
    const hsize_t at = std::min(count, p * kPiece), n = std::min(count, at + kPiece) - at;
    read_slab(dataset, H5T_NATIVE_UCHAR, buffer.data(), begin + at, n);
    agree(MPI_File_write_at_all(fh, static_cast<MPI_Offset>(begin + at), buffer.data(), static_cast<int>(n), MPI_BYTE,
                                MPI_STATUS_IGNORE), "write");
  }
  agree(MPI_File_sync(fh), "write");
  agree(MPI_File_close(&fh), "close");
}

Handle collective_transfer() {
  Handle dxpl = make_plist_handle(TOKDYN_H5(H5Pcreate(H5P_DATASET_XFER)));
  TOKDYN_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  return dxpl;
}

Handle create_group(hid_t parent, const std::string& name) {
  return make_group_handle(TOKDYN_H5(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
}

Handle open_group(hid_t parent, const std::string& name) {
  return make_group_handle(TOKDYN_H5(H5Gopen2(parent, name.c_str(), H5P_DEFAULT)));
}

Handle open_dataset(hid_t parent, const std::string& name) {
  return make_dataset_handle(TOKDYN_H5(H5Dopen2(parent, name.c_str(), H5P_DEFAULT)));
}

bool exists(hid_t parent, const std::string& path) {
  // Walk the path one link at a time: H5Lexists fails on a missing intermediate group.
  std::string prefix;
  std::istringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty()) continue;
    prefix += (prefix.empty() ? "" : "/") + part;
    const htri_t r = H5Lexists(parent, prefix.c_str(), H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    if (r <= 0) return false;
  }
  return true;
}

void write_attribute(hid_t obj, const std::string& name, const std::string& value) {
  Handle type = vlen_string_type();
  Handle attr = fresh_attribute(obj, name, type);
  const char* text = value.c_str();
  TOKDYN_H5(H5Awrite(attr, type, &text));
}

void write_attribute(hid_t obj, const std::string& name, std::int64_t value) {
  Handle attr = fresh_attribute(obj, name, H5T_STD_I64LE);
  TOKDYN_H5(H5Awrite(attr, H5T_NATIVE_INT64, &value));
}

void write_attribute(hid_t obj, const std::string& name, double value) {
  Handle attr = fresh_attribute(obj, name, H5T_IEEE_F64LE);
  TOKDYN_H5(H5Awrite(attr, H5T_NATIVE_DOUBLE, &value));
}

bool has_attribute(hid_t obj, const std::string& name) { return TOKDYN_H5(H5Aexists(obj, name.c_str())) > 0; }

namespace {
// A file tokdyn did not write (or one edited by hand) may lack an attribute or hold another type there:
// an input error naming the attribute, never an internal one.
Handle open_attribute(hid_t obj, const std::string& name, H5T_class_t want, const char* what) {
  if (!has_attribute(obj, name)) throw InputError("attribute '" + name + "' is missing");
  Handle attr = make_attr_handle(TOKDYN_H5(H5Aopen(obj, name.c_str(), H5P_DEFAULT)));
  Handle type = make_type_handle(TOKDYN_H5(H5Aget_type(attr)));
  Handle space = make_space_handle(TOKDYN_H5(H5Aget_space(attr)));
  const H5T_class_t cls = H5Tget_class(type);
  const bool number = cls == H5T_INTEGER || cls == H5T_FLOAT;
  if (want == H5T_STRING ? cls != H5T_STRING : !number)
    throw InputError("attribute '" + name + "' is not " + what);
  if (H5Sget_simple_extent_npoints(space) != 1) throw InputError("attribute '" + name + "' is not a single value");
  return attr;
}
}  // namespace

std::string read_string_attribute(hid_t obj, const std::string& name) {
  Handle attr = open_attribute(obj, name, H5T_STRING, "a string");
  Handle file_type = make_type_handle(TOKDYN_H5(H5Aget_type(attr)));
  if (TOKDYN_H5(H5Tget_class(file_type)) != H5T_STRING)
    throw InputError("attribute '" + name + "' is not a string");
  // The memory type in the file's character set: HDF5 converts no string between ASCII and UTF-8 (a
  // file written by another tool may hold either).
  const H5T_cset_t cset = H5Tget_cset(file_type);
  if (TOKDYN_H5(H5Tis_variable_str(file_type)) > 0) {
    Handle type = vlen_string_type();
    TOKDYN_H5(H5Tset_cset(type, cset));
    char* text = nullptr;
    TOKDYN_H5(H5Aread(attr, type, &text));
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(file_type);
  Handle type = make_type_handle(TOKDYN_H5(H5Tcopy(H5T_C_S1)));
  TOKDYN_H5(H5Tset_size(type, size + 1));
  TOKDYN_H5(H5Tset_cset(type, cset));
  std::string value(size + 1, '\0');
  TOKDYN_H5(H5Aread(attr, type, value.data()));
  value.resize(value.find('\0') == std::string::npos ? size : value.find('\0'));
  return value;
}

std::int64_t read_int_attribute(hid_t obj, const std::string& name) {
  Handle attr = open_attribute(obj, name, H5T_INTEGER, "a number");
  std::int64_t value = 0;
  TOKDYN_H5(H5Aread(attr, H5T_NATIVE_INT64, &value));
  return value;
}

double read_double_attribute(hid_t obj, const std::string& name) {
  Handle attr = open_attribute(obj, name, H5T_FLOAT, "a number");
  double value = 0;
  TOKDYN_H5(H5Aread(attr, H5T_NATIVE_DOUBLE, &value));
  return value;
}

namespace {
// Every group and dataset below the visited object, with its type (the object itself, ".", left out).
using Objects = std::vector<std::pair<std::string, H5O_type_t>>;
herr_t collect_object(hid_t, const char* name, const H5O_info_t* info, void* out) {
  if (std::string(name) != "." && (info->type == H5O_TYPE_DATASET || info->type == H5O_TYPE_GROUP))
    static_cast<Objects*>(out)->emplace_back(name, info->type);
  return 0;
}
std::vector<std::string> visit_paths(hid_t obj, bool datasets_only) {
  Objects objects;
  TOKDYN_H5(H5Ovisit2(obj, H5_INDEX_NAME, H5_ITER_INC, collect_object, &objects, H5O_INFO_BASIC));
  std::vector<std::string> paths;
  for (const auto& [name, type] : objects)
    if (!datasets_only || type == H5O_TYPE_DATASET) paths.push_back(name);
  return paths;
}
herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> dataset_paths(hid_t obj) { return visit_paths(obj, true); }
std::vector<std::string> object_paths(hid_t obj) { return visit_paths(obj, false); }

std::vector<std::string> attribute_names(hid_t obj) {
  std::vector<std::string> names;
  hsize_t at = 0;
  TOKDYN_H5(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &at, collect_attribute, &names));
  return names;
}

std::string attribute_bytes(hid_t obj, const std::string& name) {
  Handle attr = make_attr_handle(TOKDYN_H5(H5Aopen(obj, name.c_str(), H5P_DEFAULT)));
  Handle type = make_type_handle(TOKDYN_H5(H5Aget_type(attr)));
  Handle space = make_space_handle(TOKDYN_H5(H5Aget_space(attr)));
  const hssize_t points = TOKDYN_H5(H5Sget_simple_extent_npoints(space));
  std::string bytes = std::to_string(H5Tget_class(type)) + ":" + std::to_string(H5Tget_size(type)) + ":" +
                      std::to_string(points) + ":";
  if (TOKDYN_H5(H5Tis_variable_str(type)) > 0) {
    if (points != 1) throw InputError("attribute '" + name + "' is an array of strings");
    return bytes + read_string_attribute(obj, name);
  }
  if (H5Tget_class(type) == H5T_VLEN || H5Tget_class(type) == H5T_REFERENCE)
    throw InputError("attribute '" + name + "' holds references or variable-length data");
  std::string value(static_cast<std::size_t>(points) * H5Tget_size(type), '\0');
  if (!value.empty()) TOKDYN_H5(H5Aread(attr, type, value.data()));
  return bytes + value;
}

std::vector<hsize_t> dims(hid_t dataset) {
  Handle space = make_space_handle(TOKDYN_H5(H5Dget_space(dataset)));
  const int rank = TOKDYN_H5(H5Sget_simple_extent_ndims(space));
  std::vector<hsize_t> d(rank);
  TOKDYN_H5(H5Sget_simple_extent_dims(space, d.data(), nullptr));
  return d;
}

Handle create_series(hid_t parent, const std::string& name, hid_t type, const std::vector<hsize_t>& row_dims) {
  std::vector<hsize_t> shape{0}, max_shape{H5S_UNLIMITED}, chunk{1};
  for (hsize_t n : row_dims) shape.push_back(n), max_shape.push_back(n), chunk.push_back(n);
  if (row_dims.empty()) chunk[0] = 256;  // scalar series: many rows per chunk
  // Chunks of at most 4 MiB, large rows split along their first dimension: a collective write into one
  // chunk of a whole token snapshot made every rank hold a buffer of the chunk's size (N = 10^7, d = 16:
  // 1.2 GB more per rank). 4 MiB to 1 GiB chunks wrote at the same speed, 0.6 to 0.9 of the disk's
  // (`tokdyn bench --bench.kernel=snapshot`, doc/performance.md); 4 MiB holds the least memory.
  const hsize_t element = H5Tget_size(type);
  hsize_t bytes = element;
  for (std::size_t i = 1; i < chunk.size(); ++i) bytes *= chunk[i];
  while (chunk.size() > 1 && bytes > (hsize_t(1) << 22)) {
    chunk[1] = (chunk[1] + 1) / 2;
    bytes = (bytes + 1) / 2;
  }
  Handle space = make_space_handle(
      TOKDYN_H5(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), max_shape.data())));
  Handle dcpl = make_plist_handle(TOKDYN_H5(H5Pcreate(H5P_DATASET_CREATE)));
  TOKDYN_H5(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()));
  return make_dataset_handle(
      TOKDYN_H5(H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)));
}

void set_series_rows(hid_t dataset, hsize_t rows) {
  std::vector<hsize_t> d = dims(dataset);
  d[0] = rows;
  TOKDYN_H5(H5Dset_extent(dataset, d.data()));
}

void write_series_row(hid_t dataset, hsize_t row, hid_t mem_type, const void* data, hsize_t begin, hsize_t count) {
  if (dims(dataset)[0] < row + 1) set_series_rows(dataset, row + 1);
  transfer_slab(dataset, mem_type, const_cast<void*>(data), begin, count, true, 1, row);
}

void write_series_columns(hid_t dataset, hsize_t row, hsize_t k, const double* data, hsize_t begin, hsize_t count) {
  if (dims(dataset)[0] < row + 1) set_series_rows(dataset, row + 1);
  Handle file_space = make_space_handle(TOKDYN_H5(H5Dget_space(dataset)));
  const hsize_t n = std::max<hsize_t>(k * count, 1);  // a rank without columns selects none of one element
  Handle mem_space = make_space_handle(TOKDYN_H5(H5Screate_simple(1, &n, nullptr)));
  if (k * count == 0) {
    TOKDYN_H5(H5Sselect_none(file_space));
    TOKDYN_H5(H5Sselect_none(mem_space));
  } else {
    const hsize_t start[3] = {row, 0, begin}, size[3] = {1, k, count};
    TOKDYN_H5(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, size, nullptr));
  }
  Handle dxpl = collective_transfer();
  TOKDYN_H5(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, mem_space, file_space, dxpl, data));
}

Handle create_dataset(hid_t parent, const std::string& name, hid_t type, const std::vector<hsize_t>& shape) {
  Handle space = make_space_handle(TOKDYN_H5(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr)));
  return make_dataset_handle(
      TOKDYN_H5(H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
}

void write_slab(hid_t dataset, hid_t mem_type, const void* data, hsize_t begin, hsize_t count) {
  transfer_slab(dataset, mem_type, const_cast<void*>(data), begin, count, true, 0, 0);
}

void write_vector(hid_t parent, const std::string& name, const std::vector<double>& values, MPI_Comm comm,
                  const std::vector<hsize_t>& shape) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::vector<hsize_t> dims_ = shape.empty() ? std::vector<hsize_t>{values.size()} : shape;
  Handle d = create_dataset(parent, name, H5T_IEEE_F64LE, dims_);
  write_slab(d, H5T_NATIVE_DOUBLE, values.data(), 0, rank == 0 ? dims_[0] : 0);
}

void read_slab(hid_t dataset, hid_t mem_type, void* data, hsize_t begin, hsize_t count, bool collective) {
  transfer_slab(dataset, mem_type, data, begin, count, false, 0, 0, collective);
}

void read_series_slab(hid_t dataset, hsize_t row, hid_t mem_type, void* data, hsize_t begin, hsize_t count,
                      bool collective) {
  transfer_slab(dataset, mem_type, data, begin, count, false, 1, row, collective);
}

}  // namespace tokdyn::h5
