#include "tokdyn/io/matrix_file.hpp"

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/io/safetensors.hpp"  // shape_text

namespace tokdyn {

namespace {

// The expected shape in words: "[a, b]", or for a series "[K >= 1, a, b]".
std::string expected_text(const std::vector<std::int64_t>& shape, bool series) {
  const std::string rows = shape_text(shape);
  if (!series) return rows;
  return shape.empty() ? "[K >= 1]" : "[K >= 1, " + rows.substr(1);
}

}  // namespace

bool is_hdf5(const std::string& path) { return h5::is_hdf5_file(path); }

bool matrix_file_has(const std::string& path, const std::string& dataset, const std::string& what, MPI_Comm comm) {
  h5::Handle f = h5::open_input_file(path, comm, what);
  return h5::exists(f, dataset);
}

std::vector<double> read_matrix_file(const std::string& path, const std::string& dataset,
                                     const std::vector<std::int64_t>& shape, std::int64_t row, const std::string& what,
                                     MPI_Comm comm, std::int64_t* rows) {
  const bool series = row != kWholeDataset;
  h5::Handle f = h5::open_input_file(path, comm, what);
  h5::Handle data = h5::open_input_dataset(f, dataset, what, path);
  const std::vector<hsize_t> dims = h5::dims(data);
  std::vector<hsize_t> want(shape.begin(), shape.end());
  if (series) want.insert(want.begin(), dims.empty() ? 0 : dims[0]);
  if (dims != want || (series && dims[0] == 0))
    throw InputError(what + ": dataset '" + dataset + "' has shape " +
                     shape_text(std::vector<std::int64_t>(dims.begin(), dims.end())) + ", expected " +
                     expected_text(shape, series));
  const std::int64_t n = series ? static_cast<std::int64_t>(dims[0]) : 1;
  if (row == kLastRow) row = n - 1;
  if (series && (row < 0 || row >= n))
    throw InputError(what + ": dataset '" + dataset + "' has " + std::to_string(n) + " rows, no row " +
                     std::to_string(row));
  std::size_t count = 1;
  for (std::int64_t n : shape) count *= static_cast<std::size_t>(n);
  std::vector<double> values(count);
  if (dims.empty())
    h5::read_slab(data, H5T_NATIVE_DOUBLE, values.data(), 0, 1);
  else
    h5::read_slab(data, H5T_NATIVE_DOUBLE, values.data(), series ? row : 0, series ? 1 : dims[0]);
  if (rows) *rows = n;
  return values;
}

}  // namespace tokdyn
