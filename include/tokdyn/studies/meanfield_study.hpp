// tokdyn meanfield: the mean-field SPDE conditional on the common noise, by a solver chosen by name
// (meanfield/), as a run of L layers.
#pragma once

#include <memory>

#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/meanfield/meanfield_run.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {

class MeanFieldStudy : public Study {
 public:
  static DeckSchema schema();
  MeanFieldStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return spec_.d; }

 private:
  const Comm& comm_;
  MeanFieldSpec spec_;
  std::int64_t every_, snapshot_every_;
  double beta_;
  std::unique_ptr<MeanFieldSolver> solver_;
  std::unique_ptr<MeanFieldRun> state_;
};

}  // namespace tokdyn
