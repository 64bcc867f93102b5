#include "tokdyn/io/token_file.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

std::int64_t token_file_rows(const std::string& path, const std::string& dataset, MPI_Comm comm, int d) {
  std::vector<hsize_t> shape;
  {  // closed (collectively) before the caller opens the file again to read the rows
    h5::Handle file = h5::open_input_file(path, comm, "token file");
    shape = h5::dims(h5::open_input_dataset(file, dataset, "token file", path));
  }
  if (shape.size() != 2 || shape[1] != hsize_t(d) || shape[0] == 0)
    throw InputError("token file '" + path + "': dataset '" + dataset + "' must be [N, " + std::to_string(d) +
                     "] (N tokens of the model width d = " + std::to_string(d) + ")");
  return static_cast<std::int64_t>(shape[0]);
}

double read_initial_tokens(const std::string& path, const std::string& dataset, MPI_Comm comm,
                           const Partition& partition, int d, double* x_local) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  h5::Handle file = h5::open_input_file(path, comm, "token file");
  h5::Handle data = h5::open_input_dataset(file, dataset, "token file", path);
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Dget_type(data)));
  if (TOKDYN_H5(H5Tget_class(type)) != H5T_FLOAT)
    throw InputError("token file '" + path + "': dataset '" + dataset + "' is not floating point");
  const auto shape = h5::dims(data);
  if (shape.size() != 2 || shape[0] != hsize_t(partition.n_global) || shape[1] != hsize_t(d)) {
    std::string got;
    for (auto s : shape) got += (got.empty() ? "" : ",") + std::to_string(s);
    throw InputError("token file '" + path + "': dataset '" + dataset + "' has shape [" + got + "], expected [" +
                     std::to_string(partition.n_global) + "," + std::to_string(d) + "] (model.N, model.d)");
  }
  const std::int64_t n = partition.count(rank), begin = partition.begin(rank);
  h5::read_slab(data, H5T_NATIVE_DOUBLE, x_local, begin, n);
  double worst = 0;
  std::int64_t bad_row = -1;
  for (std::int64_t i = 0; i < n && bad_row < 0; ++i) {
    double s = 0;
    for (int a = 0; a < d; ++a) s += x_local[i * d + a] * x_local[i * d + a];
    if (!std::isfinite(s) || s == 0) bad_row = begin + i;
    worst = std::max(worst, std::abs(std::sqrt(s) - 1));
  }
  require_all(comm, bad_row < 0,
              "token file '" + path + "': row " + std::to_string(bad_row) + " is zero or holds NaN/Inf");
  normalize_rows(x_local, n, d);
  double all_worst = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&worst, &all_worst, 1, MPI_DOUBLE, MPI_MAX, comm));
  return all_worst;
}

}  // namespace tokdyn
