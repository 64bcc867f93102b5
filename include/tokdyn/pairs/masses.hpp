// Token masses w_j >= 0 with sum_j w_j = 1 (the weighted points of a mean-field quadrature), shared by
// the attention styles and the pair diagnostics. Uniform masses w_j = 1/N are the plain token cloud.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace tokdyn {

// Collective check of this rank's masses [n_local]: every mass finite and >= 0, the global sum 1 to
// 1e-12 relative; InputError on every rank otherwise. Returns true when every mass on every rank is
// uniform in floating point (N w_j == 1 exactly), so callers can keep the unweighted code path.
bool validate_masses(MPI_Comm comm, std::int64_t n_local, std::int64_t n_global, const double* masses);

}  // namespace tokdyn
