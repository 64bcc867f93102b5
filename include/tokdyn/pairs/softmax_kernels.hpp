// The per-row steps of the online softmax over one logits tile. Reductions run over 8 interleaved
// partial results in a fixed order, so they vectorise and give the same bits at every vector width.
#pragma once

namespace tokdyn {

// max_j s[j] (NaN-free input; a NaN row still poisons the sums below).
double row_max(const double* s, int n);
// s[j] <- exp(s[j] - m) for m >= max_j s[j]; returns sum_j s[j].
double shifted_exp_sum(double* s, int n, double m);

}  // namespace tokdyn
