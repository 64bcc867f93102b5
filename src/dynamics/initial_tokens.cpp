#include "tokdyn/dynamics/initial_tokens.hpp"

#include <cstdio>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/token_file.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

void initial_tokens(const TokenSource& source, const Comm& comm, const Partition& partition, int d,
                    std::vector<double>& x) {
  const std::int64_t begin = partition.begin(comm.rank()), n = partition.count(comm.rank());
  x.assign(static_cast<std::size_t>(n) * d, 0.0);
  if (source.init == "uniform") {
    sample_uniform_sphere(source.seed, begin, n, d, x.data());
    return;
  }
  const std::string& path = source.file;
  if (path.empty()) throw InputError("deck key 'tokens.init' = 'file' needs tokens.file");
  const double off = read_initial_tokens(path, source.dataset, comm.get(), partition, d, x.data());
  if (off > 1e-10) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "note: tokens of '%s' were projected onto the sphere (largest | |x| - 1 | = %.3g)",
                  path.c_str(), off);
    comm.print(buf);
  }
}

}  // namespace tokdyn
