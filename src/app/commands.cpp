#include "commands.hpp"

namespace tokdyn {

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"transformer", "discrete random transformer: N tokens through L layers of attention and random MLPs",
       transformer_schema, run_transformer},
      {"sde", "limit SDE with common noise: Ito Euler-Maruyama, Stratonovich Heun or LN-projected steps",
       sde_schema, run_sde},
      {"lyapunov", "kernel constants and Lyapunov exponents of the noise: predicted and measured on token pairs",
       lyapunov_schema, run_lyapunov},
      {"converge", "coupled convergence studies in depth L and width m over replicas (spec section 5)",
       converge_schema, run_converge, {"dmda"}},
      {"meanfield", "mean-field SPDE conditional on the common noise: grid (S^1) or weighted quadrature points",
       meanfield_schema, run_meanfield, {"dmda"}},
      {"synchronize", "synchronization by noise (Thm 1.4) over replicas: E[E_beta(t)] against its bound, clusters",
       synchronize_schema, run_synchronize},
      {"weights", "checks model weights (safetensors, HDF5, synthetic) and converts them to tokdyn's HDF5 layout",
       weights_schema, run_weights},
      {"spectrum", "leading eigenpairs of the layer matrices F = O V (SLEPc Krylov-Schur or LAPACK), gap, real plane",
       spectrum_schema, run_spectrum, {"eps"}},
      {"power", "tokens through power-method layers (spec power-method): alignment with each layer's v_1, steering",
       power_schema, run_power, {"eps"}},
      {"bench", "throughput of the attention and pair-statistics passes (pairs/s, points/s) and of the MLP",
       bench_schema, run_bench},
  };
  return list;
}

}  // namespace tokdyn
