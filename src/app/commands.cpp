#include "commands.hpp"

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/studies/converge_study.hpp"
#include "tokdyn/studies/lens_study.hpp"
#include "tokdyn/studies/lyapunov_study.hpp"
#include "tokdyn/studies/markov_study.hpp"
#include "tokdyn/studies/meanfield_study.hpp"
#include "tokdyn/studies/mlmc_study.hpp"
#include "tokdyn/studies/phase_study.hpp"
#include "tokdyn/studies/power_study.hpp"
#include "tokdyn/studies/spectrum_study.hpp"
#include "tokdyn/studies/synchronize_study.hpp"
#include "tokdyn/studies/token_studies.hpp"
#include "tokdyn/studies/train_study.hpp"

namespace tokdyn {
const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      study_command<TransformerStudy>("transformer",
          "discrete random transformer: N tokens through L layers of attention and random MLPs"),
      study_command<SdeStudy>("sde",
          "limit SDE with common noise: Ito Euler-Maruyama, Stratonovich Heun or LN-projected steps"),
      study_command<LyapunovStudy>("lyapunov",
          "kernel constants and Lyapunov exponents of the noise: predicted and measured on token pairs"),
      study_command<ConvergeStudy>("converge",
          "coupled convergence studies in depth L and width m over replicas (doc/science.md section 6)",
          {"dmda"}),
      study_command<MeanFieldStudy>("meanfield",
          "mean-field SPDE conditional on the common noise: grid (S^1) or weighted quadrature points",
          {"dmda"}),
      study_command<MlmcStudy>("mlmc",
          "E[phi(X_T)] in the deep and many-token limits: multilevel Monte Carlo over depth or tokens, multi-index over "
          "both, or plain MC"),
      study_command<SynchronizeStudy>("synchronize",
          "synchronization by noise (Thm 1.4) over replicas: E[E_beta(t)] against its bound, clusters"),
      study_command<PhaseStudy>("phase",
          "phase diagrams over (beta, t) of many independent attention systems: density at zero, clusters, span"),
      {"weights", "checks model weights (safetensors, HDF5, synthetic) and converts them to tokdyn's HDF5 layout",
       weights_schema, run_weights, Outputs::once},
      study_command<SpectrumStudy>("spectrum",
          "leading eigenpairs of the layer matrices F = O V (SLEPc Krylov-Schur or LAPACK), gap, real plane",
          {"eps"}),
      study_command<PowerStudy>("power",
          "tokens through power-method layers (doc/science.md section 7): alignment with each layer's v_1, steering",
          {"eps"}),
      study_command<LensStudy>("lens",
          "a train run's GPT through the power-method lens: spectra of F = O V per layer and head, token alignment, "
          "along training"),
      study_command<MarkovStudy>("markov",
          "gradient flow of a one-layer transformer on Markov data or a text (doc/science.md section 8)",
          {"ts"}),
      study_command<TrainStudy>("train",
          "a small GPT trained by ECD, ECDSep, SGDM or AdamW with symmetry-breaking biases and "
          "the charges of its heads"),
      {"bench",
       "throughput of the attention and pair-statistics passes (pairs/s, points/s), the MLP and the markov model",
       bench_schema, run_bench, Outputs::none},
      {"rerun", "runs a run file's command again from its stored deck, seed, options and ranks; --check: bit for bit",
       rerun_schema, run_rerun, Outputs::once},
      {"decks", "the shipped decks (input/*.ini): the command each is for and what it runs", decks_schema, run_decks,
       Outputs::none},
  };
  return list;
}

}  // namespace tokdyn
