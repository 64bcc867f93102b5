// tokdyn lyapunov: kernel constants and Lyapunov exponents of the MLP noise (doc/science.md section 6.3).
#include "commands.hpp"
#include "tokdyn/studies/lyapunov_study.hpp"

namespace tokdyn {

DeckSchema lyapunov_schema() { return LyapunovStudy::schema(); }

int run_lyapunov(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<LyapunovStudy>(comm, schema, request, "lyapunov");
}

}  // namespace tokdyn
