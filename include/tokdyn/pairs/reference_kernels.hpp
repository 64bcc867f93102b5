// Plain references of the hot row kernels (pairs/pair_kernels.hpp, pairs/softmax_kernels.hpp): one pair after
// another, std::expm1 and std::exp, one histogram, no lanes. Slow and plainly right, so the fast kernels are
// compared with them (tests/unit/test_reference_kernels.cpp): the counts and the minimum exactly, the sums to
// their round-off (the fast kernels' exp is within 3 ulp and they add in another order).
#pragma once

#include <cstdint>

#include "tokdyn/pairs/pair_kernels.hpp"

namespace tokdyn {

// pair_row_statistics with counts [bins], one histogram (a NaN cosine counts in bin 0, like the fast kernel).
PairRowStatistics pair_row_statistics_reference(const double* c, const double* h, int n, double beta, double h_row,
                                                int bins, double cluster_cosine, std::int64_t* counts);
// pair_row_weights: weights[j] = e^{beta c_j - h_row - h_j}.
void pair_row_weights_reference(const double* c, const double* h, int n, double beta, double h_row, double* weights);
// row_max and shifted_exp_sum.
double row_max_reference(const double* s, int n);
double shifted_exp_sum_reference(double* s, int n, double m);

}  // namespace tokdyn
