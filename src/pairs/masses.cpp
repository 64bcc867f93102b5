#include "tokdyn/pairs/masses.hpp"

#include <cmath>
#include <string>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

bool validate_masses(MPI_Comm comm, std::int64_t n_local, std::int64_t n_global, const double* masses) {
  bool valid = true;
  std::int64_t bad = -1;
  for (std::int64_t i = 0; i < n_local && valid; ++i)
    if (!std::isfinite(masses[i]) || masses[i] < 0) valid = false, bad = i;
  require_all(comm, valid,
              valid ? std::string()
                    : "token masses must be finite and >= 0 (mass " + std::to_string(bad) + " of a rank's " +
                          std::to_string(n_local) + " is " + std::to_string(masses[bad]) + ")");
  // Local sums in index order (compensated, so the check sees the masses' own error rather than the
  // summation's), then one reduction each: the decisions are the same on every rank.
  const double n = static_cast<double>(n_global);
  double sum_local = 0, carry = 0, uniform_local = 1;  // uniform_local: 1 while every N w_j == 1
  for (std::int64_t i = 0; i < n_local; ++i) {
    const double y = masses[i] - carry, t = sum_local + y;
    carry = (t - sum_local) - y;
    sum_local = t;
    if (n * masses[i] != 1.0) uniform_local = 0;
  }
  double sum = 0, uniform = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&sum_local, &sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  TOKDYN_MPI_CHECK(MPI_Allreduce(&uniform_local, &uniform, 1, MPI_DOUBLE, MPI_MIN, comm));
  // Every rank holds the same reduced sum, so this throw is collective.
  if (!(std::abs(sum - 1.0) <= 1e-12))
    throw InputError("token masses must sum to 1 (to 1e-12 relative), they sum to " + std::to_string(sum));
  return uniform == 1.0;
}

}  // namespace tokdyn
