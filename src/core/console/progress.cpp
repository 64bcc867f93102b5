#include "tokdyn/core/console/progress.hpp"

#include <cstdio>

namespace tokdyn {

std::string format_seconds(double s) {
  char buf[64];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else
    std::snprintf(buf, sizeof buf, "%.2f h", s / 3600);
  return buf;
}

Progress::Progress(const Comm& comm, std::int64_t first_layer, std::int64_t last_layer, double interval_seconds,
                   double work_per_layer, std::string unit, std::string label, Clock::time_point started)
    : comm_(comm), first_(first_layer), last_(last_layer), interval_(interval_seconds),
      work_per_layer_(work_per_layer), unit_(std::move(unit)), label_(std::move(label)), start_(started),
      last_print_(started) {}

double Progress::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

bool Progress::due(std::int64_t layer) const {
  const double since = std::chrono::duration<double>(Clock::now() - last_print_).count();
  return (!printed_ && layer == first_ + 1) || layer == last_ || since >= interval_;
}

void Progress::update(std::int64_t layer) {
  if (!comm_.root() || !due(layer)) return;
  const auto now = Clock::now();
  const double t = elapsed();
  const double done = static_cast<double>(layer - first_);
  const double remaining = done > 0 ? t / done * static_cast<double>(last_ - layer) : 0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %lld/%lld  elapsed %s  remaining %s  %.3g %s/s", label_.c_str(),
                static_cast<long long>(layer),
                static_cast<long long>(last_), format_seconds(t).c_str(), format_seconds(remaining).c_str(),
                t > 0 ? done * work_per_layer_ / t : 0.0, unit_.c_str());
  comm_.print(buf);
  last_print_ = now;
  printed_ = true;
}

}  // namespace tokdyn
