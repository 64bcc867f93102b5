#include "tokdyn/train/matmul.hpp"

// Compiled for several x86 vector widths, chosen at load time; FP contraction is off (CMakeLists.txt), so
// every variant gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TOKDYN_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TOKDYN_VECTOR_CLONES
#endif

namespace tokdyn {

TOKDYN_VECTOR_CLONES
void matmul(const double* a, const double* b, const double* bias, bool accumulate, int n, int p, int m, double* out) {
  // Row i of out is an axpy over the columns for each k, four k at a time so that the row is loaded and
  // stored once per four products; the columns vectorise, and the sum of every entry still runs k = 0, 1, ...
  for (int i = 0; i < n; ++i) {
    double* o = out + static_cast<long>(i) * m;  // [m]
    const double* ai = a + static_cast<long>(i) * p;  // [p]
    if (!accumulate)
      for (int j = 0; j < m; ++j) o[j] = bias ? bias[j] : 0.0;
    int k = 0;
    for (; k + 4 <= p; k += 4) {
      const double a0 = ai[k], a1 = ai[k + 1], a2 = ai[k + 2], a3 = ai[k + 3];
      const double* b0 = b + static_cast<long>(k) * m;  // rows k .. k + 3 of b [p, m]
      const double *b1 = b0 + m, *b2 = b1 + m, *b3 = b2 + m;
      for (int j = 0; j < m; ++j) {
        double s = o[j];
        s += a0 * b0[j];
        s += a1 * b1[j];
        s += a2 * b2[j];
        s += a3 * b3[j];
        o[j] = s;
      }
    }
    for (; k < p; ++k) {
      const double aik = ai[k];
      const double* bk = b + static_cast<long>(k) * m;
      for (int j = 0; j < m; ++j) o[j] += aik * bk[j];
    }
  }
}

}  // namespace tokdyn
