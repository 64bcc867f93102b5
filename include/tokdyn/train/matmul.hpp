// The one matrix product of the GPT's forward and backward passes (plain loops, register tiles).
#pragma once

namespace tokdyn {

// out [n, m] = start + a [n, p] b [p, m] (row-major, contiguous), where start is out itself when accumulate,
// else the row bias [m] on every row, else zero. Every entry adds its p products in the order 0, 1, ..., p - 1
// after its start, whatever the tile or the CPU's vector width: the bits do not depend on either.
void matmul(const double* a, const double* b, const double* bias, bool accumulate, int n, int p, int m, double* out);

}  // namespace tokdyn
