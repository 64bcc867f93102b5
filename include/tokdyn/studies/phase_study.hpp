// tokdyn phase: phase diagrams over (beta, t) of many independent attention systems (doc/science.md section 6.7):
// the density at zero, the cluster count, the dimension of the span and E_beta, with their spread over systems.
#pragma once

#include <memory>
#include <string>

#include "tokdyn/dynamics/phase_systems.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {


class PhaseStudy : public Study {
 public:
  static DeckSchema schema();
  PhaseStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  std::string plan() const override;
  int width() const override { return params_.d; }

 private:

  const Comm& comm_;
  PhaseParams params_;
  std::int64_t block_ = 0, blocks_ = 1;  // phase.block of phase.blocks
  std::unique_ptr<PhaseSystems> state_;
};

}  // namespace tokdyn
