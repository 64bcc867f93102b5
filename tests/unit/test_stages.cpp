// The stage criteria of tokdyn markov (markov/stages) on synthetic series whose onsets are known by
// construction: each criterion fires where it is written to, and not at a look-alike.
#include <gtest/gtest.h>

#include <cmath>

#include "tokdyn/markov/stages.hpp"

namespace tokdyn {
namespace {

// t = 0, 0.5, .., 200: the loss falls linearly from ln 4 to ln 4 - 1 over [10, 20] (crosses ln 4 - 0.1 at
// t = 11); sigma_1(W0) = 1e-3 e^{0.4 t} until it saturates at 2; the top mass 0.75, rising from t = 50 by
// 0.001 per unit to 0.80 at t = 100, then falling 0.001 per unit while |WQ| grows; sigma_2(W0) = 0.5
// sigma_1 until t = 30 (eps large: not yet rank one), 0.01 sigma_1 until t = 150, then 0.2 sigma_1.
StageSeries synthetic() {
  StageSeries s;
  for (int k = 0; k <= 400; ++k) {
    const double t = 0.5 * k;
    s.time.push_back(t);
    s.loss.push_back(std::log(4.0) - std::clamp((t - 10) / 10, 0.0, 1.0));
    const double sv0 = std::min(1e-3 * std::exp(0.4 * t), 2.0);
    s.sv0.push_back(sv0);
    s.g_norm.push_back(0.9 * sv0);
    s.sv1.push_back((t < 30 ? 0.5 : t < 150 ? 0.01 : 0.2) * sv0);
    s.top_mass.push_back(t < 50 ? 0.75 : t < 100 ? 0.75 + 0.001 * (t - 50) : 0.80 - 0.001 * (t - 100));
    s.norm_wq.push_back(1e-3 + t);
  }
  return s;
}

TEST(Stages, OnsetsWhereWritten) {
  const StageOnsets o = detect_stages(synthetic(), std::log(4.0));
  EXPECT_NEAR(o.condensation, 11.0, 1e-12);  // linear between records
  EXPECT_DOUBLE_EQ(o.focus, 60.5);           // first record with mass > 0.75 + 0.01
  EXPECT_DOUBLE_EQ(o.dilution, 100.0);       // the maximum, once 0.01 below it with |WQ| grown
  // Not t = 11.5 (sigma_2 = 0.5 sigma_1 right after t_I): the first return above 0.1 sigma_1.
  EXPECT_DOUBLE_EQ(o.new_direction, 150.0);
  // ln |u_1(G)^T W0| has slope 0.4 exactly on [t_I/4, 3 t_I/4].
  EXPECT_NEAR(o.rate.value, 0.4, 1e-12);
  EXPECT_LE(o.rate.low, o.rate.value);
  EXPECT_GE(o.rate.high, o.rate.value);
}

TEST(Stages, ThresholdsMoveTheOnsetsAsWritten) {
  StageThresholds th;
  th.loss_drop = 0.5;  // the loss crosses ln 4 - 0.5 at t = 15
  th.mass_rise = 0.02;  // the mass passes 0.77 first at t = 70.5
  th.rank_ratio = 0.3;  // sigma_2 = 0.2 sigma_1 after t = 150 never reaches it: no stage IV
  const StageOnsets o = detect_stages(synthetic(), std::log(4.0), th);
  EXPECT_NEAR(o.condensation, 15.0, 1e-12);
  EXPECT_DOUBLE_EQ(o.focus, 70.5);
  EXPECT_DOUBLE_EQ(o.dilution, 100.0);
  EXPECT_TRUE(std::isnan(o.new_direction));
  th = {};
  th.mass_fall = 0.05;  // the mass falls to 0.75 at t = 150: the same maximum, found later
  EXPECT_DOUBLE_EQ(detect_stages(synthetic(), std::log(4.0), th).dilution, 100.0);
  th.mass_fall = 0.2;  // never that far below: no dilution
  EXPECT_TRUE(std::isnan(detect_stages(synthetic(), std::log(4.0), th).dilution));
  const std::string text = stage_criteria(StageThresholds{0.25, 0.03, 0.04, 0.15});
  for (const char* part : {"0.25 below ln d", "by 0.03", "fallen 0.04 below", "reaches 0.15 sigma_1"})
    EXPECT_NE(text.find(part), std::string::npos) << part;
}

// |WQ| = 1e-3 e^{0.05 t}: the slope over the second half of [t_I, t_II] = [35.75, 60.5] (records 36 .. 60.5) is
// 0.05; a focus rate linear in t averages (trapezoids, exact for a line) to its value at the mid-point 48.25.
TEST(Stages, FocusGrowthOverTheSecondHalfOfThePlateau) {
  StageSeries s = synthetic();
  for (std::size_t k = 0; k < s.time.size(); ++k) {
    s.norm_wq[k] = 1e-3 * std::exp(0.05 * s.time[k]);
    s.focus_rate.push_back(0.06 + 1e-4 * (s.time[k] - 48.25) + (s.time[k] > 60.5 ? 1.0 : 0.0));
  }
  const StageOnsets o = detect_stages(s, std::log(4.0));
  EXPECT_NEAR(o.focus_growth.value, 0.05, 1e-12);
  EXPECT_NEAR(o.focus_rate, 0.06, 1e-14);  // the jump after t_II is outside the window
  EXPECT_DOUBLE_EQ(o.dilution, 100.0);      // |WQ| still grows past the peak
  s.focus_rate.clear();                     // a checkpoint without the rate: measured, no prediction
  const StageOnsets without = detect_stages(s, std::log(4.0));
  EXPECT_NEAR(without.focus_growth.value, 0.05, 1e-12);
  EXPECT_TRUE(std::isnan(without.focus_rate));
  EXPECT_TRUE(std::isnan(detect_stages(synthetic(), std::log(4.0), {0.1, 0.2, 0.01, 0.1}).focus_growth.value));
}

TEST(Stages, RecordSpacing) {
  const StageSeries s = synthetic();  // records 0.5 apart
  EXPECT_DOUBLE_EQ(record_spacing_at(s, 11.2), 0.5);
  EXPECT_DOUBLE_EQ(record_spacing_at(s, NAN), 0.0);
  EXPECT_DOUBLE_EQ(record_spacing_at(s, 500.0), 0.0);
}

TEST(Stages, NotReached) {
  StageSeries s = synthetic();
  for (double& v : s.loss) v = std::log(4.0) - 0.05;  // never 0.1 below ln d: nothing is detected
  const StageOnsets o = detect_stages(s, std::log(4.0));
  EXPECT_TRUE(std::isnan(o.condensation) && std::isnan(o.focus) && std::isnan(o.dilution) &&
              std::isnan(o.new_direction) && std::isnan(o.rate.value));
  s = synthetic();
  for (std::size_t k = 0; k < s.sv1.size(); ++k) s.sv1[k] = 0.5 * s.sv0[k];  // never rank one: no stage IV
  EXPECT_TRUE(std::isnan(detect_stages(s, std::log(4.0)).new_direction));
}

}  // namespace
}  // namespace tokdyn
