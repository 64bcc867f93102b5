// Thin, checked layer over parallel HDF5: owned handles, collective files, attributes,
// and "series" datasets (unlimited first dimension, one row per output event).
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tokdyn::h5 {

// Returns value when it is a valid id / non-negative status, else throws SystemError with the
// innermost HDF5 message.
std::int64_t checked(std::int64_t value, const char* call, const char* file, int line);
#define TOKDYN_H5(call) (::tokdyn::h5::checked(static_cast<std::int64_t>(call), #call, __FILE__, __LINE__))

// Silences HDF5's own error printing: tokdyn reports errors itself. Call once after MPI_Init.
void silence_errors();

// Move-only owner of an hid_t, closed with the matching H5?close. A handle destroyed while an exception
// unwinds the stack is let go without closing: closing a file opened with MPI-IO is collective, and the
// other ranks may not be unwinding (they wait in a collective call, or go on); the error exit ends the
// process without touching it again.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle();
  hid_t id() const { return id_; }
  operator hid_t() const { return id_; }
  void close();

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

Handle make_file_handle(hid_t id);
Handle make_group_handle(hid_t id);
Handle make_dataset_handle(hid_t id);
Handle make_space_handle(hid_t id);
Handle make_plist_handle(hid_t id);
Handle make_type_handle(hid_t id);
Handle make_attr_handle(hid_t id);

// Collective file access on comm (MPI-IO driver).
Handle create_file(const std::string& path, MPI_Comm comm);
Handle open_file(const std::string& path, MPI_Comm comm, bool writable);
// True when path names a readable HDF5 file (checked without raising HDF5 errors).
bool is_hdf5_file(const std::string& path);
// A file the user gave (tokens, weights, a checkpoint), described by `what` ("token file"): InputError on
// every rank naming it when it is missing, not HDF5, truncated or damaged. Collective.
Handle open_input_file(const std::string& path, MPI_Comm comm, const std::string& what);
// The same for the calling rank alone (sec2 driver, read-only: ranks then read independently).
Handle open_input_file_here(const std::string& path, const std::string& what);
// A dataset of such a file: InputError when it is missing or is a group ("'G' in token file 'x.h5' is a
// group, not a dataset").
Handle open_input_dataset(hid_t file, const std::string& name, const std::string& what, const std::string& path);
// The same for a group.
Handle open_input_group(hid_t file, const std::string& name, const std::string& what, const std::string& path);
// Collective transfer property list.
Handle collective_transfer();

Handle create_group(hid_t parent, const std::string& name);
Handle open_group(hid_t parent, const std::string& name);
Handle open_dataset(hid_t parent, const std::string& name);
bool exists(hid_t parent, const std::string& path);

// Attributes (collective: every rank passes the same value).
void write_attribute(hid_t obj, const std::string& name, const std::string& value);
void write_attribute(hid_t obj, const std::string& name, std::int64_t value);
void write_attribute(hid_t obj, const std::string& name, double value);
bool has_attribute(hid_t obj, const std::string& name);
std::string read_string_attribute(hid_t obj, const std::string& name);
std::int64_t read_int_attribute(hid_t obj, const std::string& name);
double read_double_attribute(hid_t obj, const std::string& name);

// The paths of every dataset under obj (no leading '/'), in name order.
std::vector<std::string> dataset_paths(hid_t obj);
// Every group and dataset below obj (not obj itself), and the attribute names of one object.
std::vector<std::string> object_paths(hid_t obj);
std::vector<std::string> attribute_names(hid_t obj);
// An attribute as comparable bytes: its type and shape, then its value (variable-length strings by content).
std::string attribute_bytes(hid_t obj, const std::string& name);

// Dimensions of a dataset.
std::vector<hsize_t> dims(hid_t dataset);

// A series: dataset [rows, row_dims...] with unlimited rows, chunked one row per chunk.
Handle create_series(hid_t parent, const std::string& name, hid_t type, const std::vector<hsize_t>& row_dims);
// Collective: grows the series to row + 1 rows if needed and writes row `row`. This rank writes
// elements [begin, begin + count) of the row's first dimension (a 1-D series: count is 0 or 1).
void write_series_row(hid_t dataset, hsize_t row, hid_t mem_type, const void* data, hsize_t begin, hsize_t count);
// Collective: row `row` of a series of [k, n] rows (grown as above), by columns: this rank writes
// columns [begin, begin + count) of each of the k sub-rows, data [k, count] row-major (a rank with no
// columns, count = 0, takes part with an empty selection).
void write_series_columns(hid_t dataset, hsize_t row, hsize_t k, const double* data, hsize_t begin, hsize_t count);
// Collective: shrinks (or grows) the number of rows.
void set_series_rows(hid_t dataset, hsize_t rows);

// Fixed-size dataset written collectively in slabs of its first dimension.
Handle create_dataset(hid_t parent, const std::string& name, hid_t type, const std::vector<hsize_t>& shape);
void write_slab(hid_t dataset, hid_t mem_type, const void* data, hsize_t begin, hsize_t count);
// A small dataset whose values every rank holds: created collectively, written by rank 0.
void write_vector(hid_t parent, const std::string& name, const std::vector<double>& values, MPI_Comm comm,
                  const std::vector<hsize_t>& shape = {});
// Reads rows [begin, begin + count) of the first dimension (all other dimensions whole); collective, or
// (collective = false) by this rank alone from a file it opened without MPI-IO.
void read_slab(hid_t dataset, hid_t mem_type, void* data, hsize_t begin, hsize_t count, bool collective = true);
// The bytes of file `path` as a new 1-D uint8 dataset `name` of parent, and back into a new file `path`
// (created or truncated). Collective: each rank moves its share, in pieces of at most 64 MiB.
void store_file_bytes(hid_t parent, const std::string& name, const std::string& path, MPI_Comm comm);
void restore_file_bytes(hid_t dataset, const std::string& path, MPI_Comm comm);

// Reads rows [begin, begin+count) of the given `row` of a series [rows, n, ...]; collective, or (collective =
// false) by this rank alone from a file it opened without MPI-IO.
void read_series_slab(hid_t dataset, hsize_t row, hid_t mem_type, void* data, hsize_t begin, hsize_t count,
                      bool collective = true);

}  // namespace tokdyn::h5
