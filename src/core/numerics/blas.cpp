#include "tokdyn/core/numerics/blas.hpp"

// Weak: resolved when OpenBLAS is linked, null otherwise.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace tokdyn {

void set_blas_threads(int threads) {
  if (openblas_set_num_threads) openblas_set_num_threads(threads);
}

}  // namespace tokdyn
