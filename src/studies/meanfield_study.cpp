#include "tokdyn/studies/meanfield_study.hpp"

#include <cstdio>
#include <limits>

#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"

namespace tokdyn {

DeckSchema MeanFieldStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "meanfield.h5");
  s.add_int("run.tile", 256, "rows per BLAS tile of the exact attention (quadrature)", 1, 1 << 16);
  s.add_int("diagnostics.every", 1, "diagnostics every k layers (and at the last)", 1);
  s.add_int("diagnostics.snapshot_every", 0, "snapshots of the measure every k' layers (0: first and last only)", 0);
  add_model_keys(s, {false, 0, 2, 100, 1.0, "dimension d (measures on S^{d-1})",
                     "layers: output times t_l = l T / L (the grid sub-steps them to meet its CFL bound)"});
  add_attention_keys(s);
  add_kernel_keys(s);
  add_field_keys(s);
  s.add_bool("noise.enabled", true, "apply the common noise");
  add_meanfield_keys(s);
  return s;
}

MeanFieldStudy::MeanFieldStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), spec_(meanfield_spec_from_deck(deck)), every_(deck.get_int("diagnostics.every")),
      snapshot_every_(deck.get_int("diagnostics.snapshot_every")), beta_(deck.get_real("attention.beta")) {}

MemoryEstimate MeanFieldStudy::memory() const {
  MemoryEstimate memory;
  meanfield_memory(memory, spec_, comm_.size());
  return memory;
}

RunState& MeanFieldStudy::setup() {
  solver_ = meanfield_solvers().make(spec_.solver, MeanFieldSetup{spec_, comm_.get()});
  state_ = std::make_unique<MeanFieldRun>(comm_, *solver_, spec_.solver, spec_.layers, spec_.horizon, every_,
                                          snapshot_every_, beta_);
  return *state_;
}

std::string MeanFieldStudy::banner() const {
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn meanfield (%s, %lld %s): d = %d, L = %lld, T = %g", spec_.solver.c_str(),
                static_cast<long long>(solver_->size()), solver_->size_unit().c_str(), spec_.d,
                static_cast<long long>(spec_.layers), spec_.horizon);
  return line;
}

}  // namespace tokdyn
