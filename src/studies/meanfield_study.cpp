#include "tokdyn/studies/meanfield_study.hpp"

#include <cstdio>
#include <limits>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/keys.hpp"

namespace tokdyn {

DeckSchema MeanFieldStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "meanfield.h5");
  s.add_int("run.tile", 256, "rows per BLAS tile of the exact attention (quadrature)", 1, 1 << 16);
  s.add_int("diagnostics.every", 1, "diagnostics every k layers (and at the last)", 1);
  s.add_int("diagnostics.snapshot_every", 0, "snapshots of the measure every k' layers (0: first and last only)", 0);
  s.add_int("model.d", 2, "dimension d (measures on S^{d-1})", 2, 1 << 16);
  s.add_int("model.L", 100, "layers: output times t_l = l T / L (the grid sub-steps them to meet its CFL bound)", 1);
  s.add_real("model.T", 1.0, "horizon T", 0.0, std::numeric_limits<double>::infinity(), true);
  add_attention_keys(s);
  add_kernel_keys(s);
  add_field_keys(s);
  s.add_bool("noise.enabled", true, "apply the common noise");
  add_meanfield_keys(s);
  return s;
}

MeanFieldStudy::MeanFieldStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), deck_(deck), solver_name_(deck.get_text("meanfield.solver")), layers_(deck.get_int("model.L")),
      horizon_(deck.get_real("model.T")), d_(static_cast<int>(deck.get_int("model.d"))) {}

MemoryEstimate MeanFieldStudy::memory() const {
  MemoryEstimate memory;
  meanfield_memory(memory, deck_, comm_.size());
  return memory;
}

RunState& MeanFieldStudy::setup() {
  solver_ = meanfield_solvers().make(solver_name_, MeanFieldSetup{&deck_, comm_.get(), std::nullopt});
  state_ = std::make_unique<MeanFieldRun>(comm_, *solver_, solver_name_, layers_, horizon_,
                                          deck_.get_int("diagnostics.every"), deck_.get_int("diagnostics.snapshot_every"),
                                          deck_.get_real("attention.beta"));
  return *state_;
}

std::string MeanFieldStudy::banner() const {
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn meanfield (%s, %lld %s): d = %d, L = %lld, T = %g", solver_name_.c_str(),
                static_cast<long long>(solver_->size()), solver_->size_unit().c_str(), d_,
                static_cast<long long>(layers_), horizon_);
  return line;
}

}  // namespace tokdyn
