#include "tokdyn/markov/stages.hpp"

#include <cmath>
#include <cstdio>

namespace tokdyn {

std::string stage_criteria(const StageThresholds& th) {
  char text[1280];
  std::snprintf(text, sizeof text,
                "condensation (I): the first time the loss is %g below ln d (linear between records); "
                "focus (II): the first time after I that the attention mass on the most frequent token exceeds its "
                "value at t = 0 (the token's frequency in the context) by %g; "
                "dilution (III): the time of that mass's maximum after II, once it has fallen %g below the maximum "
                "while |WQ| grew; new direction (IV): the first time after I that sigma_2(W0) reaches %g sigma_1(W0) "
                "again, after it was below (W0 of rank one); "
                "stage-I rate: the least-squares slope of ln |u_1(G)^T W0| (W0 along the growing direction) over t in "
                "[t_I/4, 3 t_I/4], +-1.96 standard errors; focus growth: the least-squares slope of ln |WQ|_F over "
                "the second half of [t_I, t_II], next to the mean there of the focus rate sigma_max(W0^T H W0)",
                th.loss_drop, th.mass_rise, th.mass_fall, th.rank_ratio);
  return text;
}

double record_spacing_at(const StageSeries& s, double t) {
  for (std::size_t k = 1; k < s.time.size(); ++k)
    if (s.time[k - 1] <= t && t <= s.time[k]) return s.time[k] - s.time[k - 1];
  return 0;
}

namespace {

// The plateau between condensation and focus, where W0 and H change slowly and WQ, WK grow from their initial
// scale: over its second half (they have turned to A's top singular pair) ln |WQ| rises at the focus rate.
void focus_growth(const StageSeries& s, StageOnsets& o) {
  const double from = (o.condensation + o.focus) / 2;
  std::vector<double> t, y;
  double area = s.focus_rate.size() == s.time.size() ? 0.0 : NAN;  // NaN: series without the rate
  for (std::size_t k = 0; k < s.time.size(); ++k) {
    if (s.time[k] < from || s.time[k] > o.focus || !(s.norm_wq[k] > 0)) continue;
    if (!t.empty() && !std::isnan(area)) area += (s.time[k] - t.back()) * (s.focus_rate[k] + s.focus_rate[k - 1]) / 2;
    t.push_back(s.time[k]), y.push_back(std::log(s.norm_wq[k]));
  }
  if (t.size() < 3) return;
  o.focus_growth = fitted_slope(t, y);
  o.focus_rate = area / (t.back() - t.front());
}

}  // namespace

StageOnsets detect_stages(const StageSeries& s, double log_d, const StageThresholds& th) {
  StageOnsets o;
  const std::size_t n = s.time.size();
  const double level = log_d - th.loss_drop;
  std::size_t k1 = n;
  for (std::size_t k = 1; k < n && k1 == n; ++k)
    if (s.loss[k] < level) {
      k1 = k;
      const double f = (s.loss[k - 1] - level) / (s.loss[k - 1] - s.loss[k]);
      o.condensation = s.time[k - 1] + f * (s.time[k] - s.time[k - 1]);
    }
  if (k1 == n) return o;
  std::vector<double> t, y;
  for (std::size_t k = 0; k < n; ++k)
    // Along u_1(G), not sigma_1(W0): with many tokens the random bulk of W0 (about eps (sqrt d + sqrt m))
    // hides the growing direction from sigma_1 until late in stage I.
    if (s.time[k] >= o.condensation / 4 && s.time[k] <= 3 * o.condensation / 4 && s.g_norm[k] > 0)
      t.push_back(s.time[k]), y.push_back(std::log(s.g_norm[k]));
  if (t.size() >= 3) o.rate = fitted_slope(t, y);
  std::size_t k2 = n;
  for (std::size_t k = k1; k < n && k2 == n; ++k)
    if (s.top_mass[k] > s.top_mass[0] + th.mass_rise) k2 = k, o.focus = s.time[k];
  // W0 must first have condensed to rank one (sigma_2 < 0.1 sigma_1): at a large eps the initial sigma_2
  // is still comparable to sigma_1 just after t_I.
  bool rank_one = false;
  for (std::size_t k = k1; k < n && std::isnan(o.new_direction); ++k) {
    if (s.sv1[k] < th.rank_ratio * s.sv0[k]) rank_one = true;
    else if (rank_one) o.new_direction = s.time[k];
  }
  if (k2 == n) return o;
  focus_growth(s, o);
  std::size_t peak = k2;
  for (std::size_t k = k2; k < n; ++k) {
    if (s.top_mass[k] > s.top_mass[peak]) peak = k;
    if (s.top_mass[k] < s.top_mass[peak] - th.mass_fall && s.norm_wq[k] > s.norm_wq[peak]) {
      o.dilution = s.time[peak];
      break;
    }
  }
  return o;
}

}  // namespace tokdyn
