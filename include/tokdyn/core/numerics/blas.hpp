// BLAS entry points used by the hot loops (OpenBLAS through the CBLAS interface).
#pragma once

#include <cblas.h>

namespace tokdyn {

// Single-threaded BLAS by default: MPI ranks already occupy the cores, and a fixed thread count keeps
// results bitwise reproducible. No-op when the BLAS is not OpenBLAS.
void set_blas_threads(int threads);

// C[m, n] = alpha * A[m, k] * B[n, k]^T + beta * C, row-major with leading dimensions lda, ldb, ldc.
inline void gemm_nt(int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
                    double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// C[m, n] = alpha * A[m, k] * B[k, n] + beta * C, row-major.
inline void gemm_nn(int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
                    double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// C[m, n] = alpha * A[k, m]^T * B[k, n] + beta * C, row-major.
inline void gemm_tn(int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
                    double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The same three in float32, for the float32 tiles of attention.precision = float32 (sums across tiles stay
// in double).
inline void gemm_nt(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                    float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm_nn(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                    float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm_tn(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                    float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tokdyn
