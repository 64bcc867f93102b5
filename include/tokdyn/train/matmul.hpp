// The one matrix product of the GPT's forward and backward passes (register tiles of FMAs).
#pragma once

namespace tokdyn {

// out [n, m] = start + a [n, p] b [p, m] (row-major, contiguous), where start is out itself when accumulate,
// else the row bias [m] on every row, else zero. Every entry adds its p products in the order 0, 1, ..., p - 1
// after its start, each by one fused multiply-add (one rounding), whatever the tile or the CPU's vector width
// (AVX-512, AVX2, or std::fma where the CPU has no FMA): the bits depend on neither.
void matmul(const double* a, const double* b, const double* bias, bool accumulate, int n, int p, int m, double* out);

// out [n, m] = a^T b with a [p, n], b [p, m]: the bits of matmul on a transposed first (the same sums in the same
// order), without the transpose.
void matmul_tn(const double* a, const double* b, int n, int p, int m, double* out);

// The same product by one named kernel (the tests check each the CPU has against the plain loop): false, and
// nothing computed, when this CPU lacks it. matmul takes the first of avx512, avx2 the CPU runs, else plain.
enum class MatmulKernel { avx512, avx2, plain };
// a_transposed: a is [p, n] and the product a^T b (as matmul_tn).
bool matmul_with(MatmulKernel kernel, bool a_transposed, const double* a, const double* b, const double* bias,
                 bool accumulate, int n, int p, int m, double* out);

}  // namespace tokdyn
