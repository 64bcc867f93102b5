// tokdyn spectrum: the leading eigenpairs of each layer matrix F_t = O_t V_t (doc/science.md sections
// 7.1 and 7.4): eigenvalues, residuals, converged count, spectral gap, real plane of a complex pair, eigenvectors.
// A run of one step per listed layer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/spectral/eigensolver.hpp"
#include "tokdyn/studies/study.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// Every deck key of tokdyn spectrum but the weight source's (weights_from_deck reads those).
struct SpectrumParams {
  EigenSettings eigen;       // spectrum.nev, which, residual, left, vectors, ncv, mpd, tol, max_it; run.seed,
                             // run.progress_interval
  std::string solver;        // spectrum.solver as given: auto, krylovschur or lapack
  std::string op;            // spectrum.operator: shell or dense (Krylov-Schur)
  std::string layers;        // spectrum.layers: all, or 0-based indices separated by commas
  std::int64_t dense_max = 0;
};
SpectrumParams spectrum_params(const Deck& deck);

class SpectrumRun;

class SpectrumStudy : public Study {
 public:
  static DeckSchema schema();
  SpectrumStudy(const Comm& comm, const Deck& deck);
  ~SpectrumStudy() override;
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return d_; }

 private:
  const Comm& comm_;
  SpectrumParams p_;
  std::unique_ptr<WeightSource> source_;
  int d_;
  std::int64_t total_layers_;
  std::vector<std::int64_t> layers_;  // the layers solved, in order (one for shared weights)
  std::string solver_;                // krylovschur or lapack (auto resolved by d)
  std::unique_ptr<SpectrumRun> state_;
};

}  // namespace tokdyn
