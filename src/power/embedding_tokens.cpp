#include "tokdyn/power/embedding_tokens.hpp"

#include <cmath>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

std::vector<double> embedding_tokens(const std::vector<std::int64_t>& ids, const Comm& comm,
                                     const WeightSource& source, int d, Partition& partition) {
  if (!source.has_embedding())
    throw InputError("tokens from the embedding need a model with a token embedding; " + source.describe() +
                     " has none");
  partition = Partition(static_cast<std::int64_t>(ids.size()), comm.size());
  const std::int64_t begin = partition.begin(comm.rank()), n = partition.count(comm.rank());
  std::vector<double> x = read_collectively(comm.get(), [&] {
    return n > 0 ? source.embedding(std::vector<std::int64_t>(ids.begin() + begin, ids.begin() + begin + n))
                 : std::vector<double>();
  });
  std::int64_t bad = -1;
  for (std::int64_t i = 0; i < n && bad < 0; ++i) {
    double s = 0;
    for (int a = 0; a < d; ++a) s += x[i * d + a] * x[i * d + a];
    if (!(s > 0) || !std::isfinite(s)) bad = ids[begin + i];
  }
  require_all(comm.get(), bad < 0, "the embedding of token id " + std::to_string(bad) + " is zero or not finite");
  normalize_rows(x.data(), n, d);
  return x;
}

}  // namespace tokdyn
