#include "tokdyn/train/matmul.hpp"

#include <cmath>
#include <initializer_list>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TOKDYN_MATMUL_X86 1
#endif

namespace tokdyn {

namespace {

constexpr int kRows = 4;  // rows of a register tile

// The reference: every entry its start, then s = fma(a_ik, b_kj, s) for k = 0, 1, ..., p - 1. std::fma rounds
// once, exactly as the hardware's FMA does, so this loop and the vector kernels below give the same bits.
// a's entry (i, k) is a[i rs + k ks]: rs = p, ks = 1 for a [n, p]; rs = 1, ks = n for a^T with a [p, n].
void matmul_plain(const double* a, long rs, long ks, const double* b, const double* bias, bool accumulate, int n,
                  int p, int m, double* out) {
  for (int i = 0; i < n; ++i) {
    double* o = out + static_cast<long>(i) * m;
    const double* ai = a + i * rs;
    for (int j = 0; j < m; ++j) {
      double s = accumulate ? o[j] : bias ? bias[j] : 0.0;
      for (int k = 0; k < p; ++k) s = std::fma(ai[k * ks], b[static_cast<long>(k) * m + j], s);
      o[j] = s;
    }
  }
}

#ifdef TOKDYN_MATMUL_X86
// Register tiles of kRows x (W vectors) entries: each b row segment is loaded once for kRows rows, each a entry
// once per tile, and every entry still adds its products in the order k = 0, 1, ... (one FMA each). Written
// once for both vector widths; the lanes (8 doubles for AVX-512, 4 for AVX2) come from the traits S.
#define TOKDYN_MATMUL_KERNEL(S, TARGET)                                                                          \
  template <int W>                                                                                              \
  [[gnu::target(TARGET), gnu::always_inline]] inline void tile_##S(const double* ai, long rs, long ks,          \
                                                                   const double* b, const double* bias,         \
                                                                   bool accumulate, int p, int m, int j,        \
                                                                   double* oi) {                               \
    S::v acc[kRows][W];                                                                                         \
    for (int r = 0; r < kRows; ++r)                                                                             \
      for (int w = 0; w < W; ++w) {                                                                             \
        const int c = j + S::lanes * w;                                                                         \
        acc[r][w] = accumulate ? S::load(oi + static_cast<long>(r) * m + c) : bias ? S::load(bias + c) : S::zero(); \
      }                                                                                                         \
    for (int k = 0; k < p; ++k) {                                                                               \
      S::v bk[W];                                                                                               \
      for (int w = 0; w < W; ++w) bk[w] = S::load(b + static_cast<long>(k) * m + j + S::lanes * w);            \
      for (int r = 0; r < kRows; ++r) {                                                                         \
        const S::v ar = S::set1(ai[r * rs + k * ks]);                                                           \
        for (int w = 0; w < W; ++w) acc[r][w] = S::fma(ar, bk[w], acc[r][w]);                                   \
      }                                                                                                         \
    }                                                                                                           \
    for (int r = 0; r < kRows; ++r)                                                                             \
      for (int w = 0; w < W; ++w) S::store(oi + static_cast<long>(r) * m + j + S::lanes * w, acc[r][w]);        \
  }                                                                                                             \
  [[gnu::target(TARGET)]] void matmul_##S(const double* a, long rs, long ks, const double* b, const double* bias, \
                                          bool accumulate, int n, int p, int m, double* out) {                 \
    constexpr int L = S::lanes;                                                                                 \
    int i = 0;                                                                                                  \
    for (; i + kRows <= n; i += kRows) {                                                                        \
      const double* ai = a + i * rs;                                                                            \
      double* oi = out + static_cast<long>(i) * m;                                                              \
      int j = 0;                                                                                                \
      for (; j + 2 * L <= m; j += 2 * L) tile_##S<2>(ai, rs, ks, b, bias, accumulate, p, m, j, oi);             \
      for (; j + L <= m; j += L) tile_##S<1>(ai, rs, ks, b, bias, accumulate, p, m, j, oi);                     \
      if (j < m) /* the last columns: the plain loop on this block */                                           \
        for (int r = 0; r < kRows; ++r)                                                                         \
          for (int c = j; c < m; ++c) {                                                                         \
            double* o = oi + static_cast<long>(r) * m;                                                          \
            double s = accumulate ? o[c] : bias ? bias[c] : 0.0;                                                \
            for (int k = 0; k < p; ++k) s = std::fma(ai[r * rs + k * ks], b[static_cast<long>(k) * m + c], s); \
            o[c] = s;                                                                                           \
          }                                                                                                     \
    }                                                                                                           \
    if (i < n) matmul_plain(a + i * rs, rs, ks, b, bias, accumulate, n - i, p, m, out + static_cast<long>(i) * m); \
  }

struct Avx512 {
  using v = __m512d;
  static constexpr int lanes = 8;
  [[gnu::target("avx512f"), gnu::always_inline]] static inline v load(const double* p) { return _mm512_loadu_pd(p); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline void store(double* p, v x) { _mm512_storeu_pd(p, x); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline v zero() { return _mm512_setzero_pd(); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline v set1(double x) { return _mm512_set1_pd(x); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline v fma(v a, v b, v c) { return _mm512_fmadd_pd(a, b, c); }
};
struct Avx2 {
  using v = __m256d;
  static constexpr int lanes = 4;
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline v load(const double* p) { return _mm256_loadu_pd(p); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline void store(double* p, v x) { _mm256_storeu_pd(p, x); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline v zero() { return _mm256_setzero_pd(); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline v set1(double x) { return _mm256_set1_pd(x); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline v fma(v a, v b, v c) { return _mm256_fmadd_pd(a, b, c); }
};

TOKDYN_MATMUL_KERNEL(Avx512, "avx512f,avx2,fma")
TOKDYN_MATMUL_KERNEL(Avx2, "avx2,fma")
#undef TOKDYN_MATMUL_KERNEL
#endif

using Kernel = void (*)(const double*, long, long, const double*, const double*, bool, int, int, int, double*);

// The named kernel, or null when this CPU lacks it.
Kernel kernel_for(MatmulKernel k) {
#ifdef TOKDYN_MATMUL_X86
  __builtin_cpu_init();
  if (k == MatmulKernel::avx512) return __builtin_cpu_supports("avx512f") ? matmul_Avx512 : nullptr;
  if (k == MatmulKernel::avx2)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? matmul_Avx2 : nullptr;
#else
  if (k != MatmulKernel::plain) return nullptr;
#endif
  return matmul_plain;
}

// The widest kernel this CPU runs; without FMA the plain loop (std::fma in software: slow, the same bits).
Kernel best_kernel() {
  for (MatmulKernel k : {MatmulKernel::avx512, MatmulKernel::avx2})
    if (Kernel f = kernel_for(k)) return f;
  return matmul_plain;
}

}  // namespace

void matmul(const double* a, const double* b, const double* bias, bool accumulate, int n, int p, int m, double* out) {
  static const Kernel kernel = best_kernel();
  kernel(a, p, 1, b, bias, accumulate, n, p, m, out);
}

void matmul_tn(const double* a, const double* b, int n, int p, int m, double* out) {
  static const Kernel kernel = best_kernel();
  kernel(a, 1, n, b, nullptr, false, n, p, m, out);
}

bool matmul_with(MatmulKernel kernel, bool a_transposed, const double* a, const double* b, const double* bias,
                 bool accumulate, int n, int p, int m, double* out) {
  const Kernel f = kernel_for(kernel);
  if (f) f(a, a_transposed ? 1 : p, a_transposed ? n : 1, b, bias, accumulate, n, p, m, out);
  return f != nullptr;
}

}  // namespace tokdyn
