#include "tokdyn/train/matmul.hpp"

#include <cstring>

#include "tokdyn/core/numerics/vector_clones.hpp"

namespace tokdyn {

namespace {

// Eight doubles (GCC's vector extension: one AVX-512 register, two AVX2 or four SSE2 ones). The helpers are
// always inlined into each clone, so no v8 crosses a call (the ABI warning below does not apply).
#pragma GCC diagnostic ignored "-Wpsabi"
typedef double v8 __attribute__((vector_size(64)));
constexpr int kRows = 4;  // rows of a register tile

[[gnu::always_inline]] inline v8 load(const double* p) {
  v8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(double* p, v8 v) { std::memcpy(p, &v, sizeof v); }
// The start of 8 entries of a row: out itself (accumulate), the bias, or zero.
[[gnu::always_inline]] inline v8 start8(const double* bias, bool accumulate, const double* o, int j) {
  return accumulate ? load(o + j) : bias ? load(bias + j) : v8{};
}

// Rows i .. i + kRows - 1, columns j .. j + 8 W - 1 of out, held in registers over the whole k loop.
template <int W>
[[gnu::always_inline]] inline void tile(const double* ai, const double* b, const double* bias, bool accumulate,
                                        int p, int m, int j, double* oi) {
  v8 acc[kRows][W];
  for (int r = 0; r < kRows; ++r)
    for (int w = 0; w < W; ++w) acc[r][w] = start8(bias, accumulate, oi + static_cast<long>(r) * m, j + 8 * w);
  for (int k = 0; k < p; ++k) {
    v8 bk[W];  // b [k, j .. j + 8 W)
    for (int w = 0; w < W; ++w) bk[w] = load(b + static_cast<long>(k) * m + j + 8 * w);
    for (int r = 0; r < kRows; ++r) {
      const double ar = ai[static_cast<long>(r) * p + k];
      for (int w = 0; w < W; ++w) acc[r][w] += ar * bk[w];
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int w = 0; w < W; ++w) store(oi + static_cast<long>(r) * m + j + 8 * w, acc[r][w]);
}

}  // namespace

TOKDYN_VECTOR_CLONES
void matmul(const double* a, const double* b, const double* bias, bool accumulate, int n, int p, int m, double* out) {
  // Register tiles of kRows x 16 (then x 8) entries: each b row segment is loaded once for kRows rows, each
  // a entry once per tile. Every entry still adds its products in the order k = 0, 1, ... after its start
  // (a multiply, then an add: contraction is off), as the plain loop does.
  int i = 0;
  for (; i + kRows <= n; i += kRows) {
    const double* ai = a + static_cast<long>(i) * p;  // rows i .. i + kRows - 1 of a [n, p]
    double* oi = out + static_cast<long>(i) * m;
    int j = 0;
    for (; j + 16 <= m; j += 16) tile<2>(ai, b, bias, accumulate, p, m, j, oi);
    for (; j + 8 <= m; j += 8) tile<1>(ai, b, bias, accumulate, p, m, j, oi);
    for (; j < m; ++j)  // the last columns, one entry at a time
      for (int r = 0; r < kRows; ++r) {
        double* o = oi + static_cast<long>(r) * m;
        double s = accumulate ? o[j] : bias ? bias[j] : 0.0;
        for (int k = 0; k < p; ++k) s += ai[static_cast<long>(r) * p + k] * b[static_cast<long>(k) * m + j];
        o[j] = s;
      }
  }
  for (; i < n; ++i) {  // the last rows: an axpy over the columns for each k
    double* o = out + static_cast<long>(i) * m;  // [m]
    const double* ai = a + static_cast<long>(i) * p;  // [p]
    if (!accumulate)
      for (int j = 0; j < m; ++j) o[j] = bias ? bias[j] : 0.0;
    for (int k = 0; k < p; ++k) {
      const double aik = ai[k];
      const double* bk = b + static_cast<long>(k) * m;
      for (int j = 0; j < m; ++j) o[j] += aik * bk[j];
    }
  }
}

}  // namespace tokdyn
