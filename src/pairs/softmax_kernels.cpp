#include "tokdyn/pairs/softmax_kernels.hpp"

#include "tokdyn/core/numerics/fast_exp.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"

namespace tokdyn {
namespace {
constexpr int kSoftmaxLanes = 8;
}

TOKDYN_VECTOR_CLONES double row_max(const double* s, int n) {
  double lane[kSoftmaxLanes];
  for (int k = 0; k < kSoftmaxLanes; ++k) lane[k] = s[0];
  int j = 0;
  for (; j + kSoftmaxLanes <= n; j += kSoftmaxLanes)
    for (int k = 0; k < kSoftmaxLanes; ++k) lane[k] = s[j + k] > lane[k] ? s[j + k] : lane[k];
  double m = lane[0];
  for (int k = 1; k < kSoftmaxLanes; ++k) m = lane[k] > m ? lane[k] : m;
  for (; j < n; ++j) m = s[j] > m ? s[j] : m;
  return m;
}

TOKDYN_VECTOR_CLONES double shifted_exp_sum(double* s, int n, double m) {
  double lane[kSoftmaxLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  int j = 0;
  for (; j + kSoftmaxLanes <= n; j += kSoftmaxLanes)
    for (int k = 0; k < kSoftmaxLanes; ++k) {
      s[j + k] = exp_nonpositive(s[j + k] - m);
      lane[k] += s[j + k];
    }
  double sum = 0;
  for (; j < n; ++j) {
    s[j] = exp_nonpositive(s[j] - m);
    sum += s[j];
  }
  for (int k = 0; k < kSoftmaxLanes; ++k) sum += lane[k];
  return sum;
}

}  // namespace tokdyn
