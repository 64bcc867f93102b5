// The four stages of doc/science.md section 8.4 read off the recorded series, by written criteria
// (kStageCriteria, also stored in the run file): the onset times of condensation, focus, dilution and
// the new direction, and the stage-I growth rate of W0 along u_1(G) fitted with its interval.
#pragma once

#include <cmath>
#include <string>
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
  std::vector<double> focus_rate;  // sigma_max(W0^T H W0), the rate the flow grows WQ and WK at (NaN: unknown)
};

struct StageOnsets {
  double condensation = NAN, focus = NAN, dilution = NAN, new_direction = NAN;  // NaN: not reached
  Estimate rate{NAN, NAN, NAN};  // of log |u_1(G)^T W0| over t in [t_I / 4, 3 t_I / 4]; NaN without t_I
  // Before focus: the slope of log |WQ|_F over the second half of [t_I, t_II], next to the focus rate's mean
  // over the same records (trapezoids); NaN without t_II or with fewer than 3 records there.
  Estimate focus_growth{NAN, NAN, NAN};
  double focus_rate = NAN;
};

// The thresholds of the criteria (deck keys stages.*; the defaults are the ones the docs' numbers use).
struct StageThresholds {
  double loss_drop = 0.1;   // I: the loss this far below ln d
  double mass_rise = 0.01;  // II: the top mass this far above its value at t = 0
  double mass_fall = 0.01;  // III: the top mass this far below its maximum
  double rank_ratio = 0.1;  // IV: sigma_2(W0) / sigma_1(W0) back above this, after below it
};

// The criteria in words, with the thresholds' values (stored in the run file as markov@stage_criteria).
std::string stage_criteria(const StageThresholds& th);

// log_d: ln d (the loss at eps -> 0).
StageOnsets detect_stages(const StageSeries& s, double log_d, const StageThresholds& th = {});

// The spacing of the records around time t (the interval [t_k, t_{k+1}] that holds it; 0 when t is NaN or
// outside the series): an onset read between records is uncertain by up to that much.
double record_spacing_at(const StageSeries& s, double t);

}  // namespace tokdyn
