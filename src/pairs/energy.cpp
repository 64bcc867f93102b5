#include "tokdyn/pairs/energy.hpp"

#include <cmath>
#include <limits>

namespace tokdyn {

double max_energy_beta() { return std::log(std::numeric_limits<double>::max()); }

double energy_from_scaled(double beta, double s) {
  if (s == 0) return 0;
  return std::copysign(std::exp(beta + std::log(std::abs(s))), s);
}

}  // namespace tokdyn
