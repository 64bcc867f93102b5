// Progress lines on rank 0: layer k/L, elapsed, estimated remaining, throughput.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "tokdyn/core/mpi/comm.hpp"

namespace tokdyn {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  // work_per_layer and unit name the throughput ("pairs" per layer for attention).
  // label names what is counted ("layer", or "replica" for studies). started: when the work of first_layer + 1
  // began (a run whose set-up already computes the first layer's forces starts its clock before the set-up).
  Progress(const Comm& comm, std::int64_t first_layer, std::int64_t last_layer, double interval_seconds,
           double work_per_layer, std::string unit, std::string label = "layer", Clock::time_point started = Clock::now());
  // Whether update(layer) prints: the first layer, the last, and when interval seconds have passed.
  bool due(std::int64_t layer) const;
  // Call after finishing `layer`; prints when due.
  void update(std::int64_t layer);
  // The same for a run whose plan changes as it goes: `last` is the last layer it now plans.
  void update(std::int64_t layer, std::int64_t last) {
    last_ = last;
    update(layer);
  }
  double elapsed() const;

 private:
  const Comm& comm_;
  std::int64_t first_, last_;
  double interval_, work_per_layer_;
  std::string unit_, label_;
  Clock::time_point start_, last_print_;
  bool printed_ = false;
};

std::string format_seconds(double s);

}  // namespace tokdyn
