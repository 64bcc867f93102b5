// The built-in optimizers (one file each), listed by src/train/optimizers.cpp. Internal.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>

#include "tokdyn/core/numerics/dot.hpp"
#include "tokdyn/train/optimizer.hpp"

namespace tokdyn {

// Each adds its optimizer (add_optimizer_class) with its name and help.
void add_ecd(OptimizerRegistry& registry);
void add_ecd_sep(OptimizerRegistry& registry);
void add_sgdm(OptimizerRegistry& registry);
void add_adamw(OptimizerRegistry& registry);

// The loss offset F0 of ECD and ECDSep (their kicks divide by F~ - F0): a number, or `auto`, the authors'
// rule F0 = F_min - 1 with F_min the lowest F~ seen so far, this step's included, so that F~ - F0 >= 1 at
// every step (a fixed F0 close to the losses a run reaches makes F~ - F0 small and the kicks large).
struct LossOffset {
  bool automatic = false;
  double fixed = 0;
  double minimum = NAN;  // lowest F~ so far (auto; checkpointed)
  double at(double F) {
    if (!automatic) return fixed;
    if (std::isnan(minimum) || F < minimum) minimum = F;
    return minimum - 1;
  }
  std::string report(const std::string& optimizer) const {
    if (!automatic || std::isnan(minimum)) return "";
    char line[200];
    std::snprintf(line, sizeof line, "%s: F0 = auto ended at %.6g (the lowest loss %.6g, less 1)", optimizer.c_str(),
                  minimum - 1, minimum);
    return line;
  }
};

}  // namespace tokdyn
