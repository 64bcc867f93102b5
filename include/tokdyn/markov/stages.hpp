// The four stages of doc/science.md section 8.4 read off the recorded series, by written criteria
// (kStageCriteria, also stored in the run file): the onset times of condensation, focus, dilution and
// the new direction, and the stage-I growth rate of W0 along u_1(G) fitted with its interval.
#pragma once

#include <cmath>
#include <vector>

#include "tokdyn/diagnostics/fit.hpp"

namespace tokdyn {

// One value per record.
struct StageSeries {
  std::vector<double> time, loss;
  std::vector<double> top_mass;    // attention mass on the most frequent token
  std::vector<double> norm_wq;     // |WQ|_F
  std::vector<double> sv0, sv1;    // the two largest singular values of W0
  std::vector<double> g_norm;      // |u_1(G)^T W0|: the size of W0 along the direction stage I grows
};

struct StageOnsets {
  double condensation = NAN, focus = NAN, dilution = NAN, new_direction = NAN;  // NaN: not reached
  Estimate rate{NAN, NAN, NAN};  // of log |u_1(G)^T W0| over t in [t_I / 4, 3 t_I / 4]; NaN without t_I
};

extern const char* const kStageCriteria;

// log_d: ln d (the loss at eps -> 0).
StageOnsets detect_stages(const StageSeries& s, double log_d);

}  // namespace tokdyn
