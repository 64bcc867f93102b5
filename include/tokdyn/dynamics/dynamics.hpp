// A layer-by-layer (or step-by-step) evolution of the tokens; the run driver does the rest.
#pragma once

#include <cstdint>
#include <string>

namespace tokdyn {

class Attention;

class Dynamics {
 public:
  virtual ~Dynamics() = default;
  // Advances this rank's tokens x [n_local, d] from layer `layer` to layer + 1. Collective.
  virtual void step(std::int64_t layer, double* x) = 0;
  // Time t of layer l (l * T / L for the transformer).
  virtual double time(std::int64_t layer) const = 0;
  // Work of one step for the throughput line, and its unit ("pairs" for attention).
  virtual double work_per_step() const = 0;
  virtual std::string work_unit() const = 0;
  // The attention a step applies first to the tokens it is given (null: none), so that diagnostics of
  // those tokens can be fused with its pass (Attention::statistics_pass).
  virtual Attention* attention() const { return nullptr; }
};

}  // namespace tokdyn
