#include "tokdyn/io/vector_file.hpp"

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/hdf5.hpp"

namespace tokdyn {

std::vector<double> read_vector_file(const std::string& path, const std::string& dataset, const std::string& what,
                                     MPI_Comm comm, int d) {
  h5::Handle f = h5::open_input_file(path, comm, what + ": file");
  h5::Handle data = h5::open_input_dataset(f, dataset, what + ": file", path);
  std::size_t count = 1;
  for (hsize_t n : h5::dims(data)) count *= n;
  if (count != static_cast<std::size_t>(d))
    throw InputError(what + " has " + std::to_string(count) + " entries, the model width is d = " + std::to_string(d));
  std::vector<double> u(count);
  const std::vector<hsize_t> shape = h5::dims(data);
  // The whole first dimension is the whole dataset (a scalar dataset: its one value).
  h5::read_slab(data, H5T_NATIVE_DOUBLE, u.data(), 0, shape.empty() ? 1 : shape[0]);
  return u;
}

}  // namespace tokdyn
