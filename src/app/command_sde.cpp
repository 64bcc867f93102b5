// tokdyn sde: the limit SDE of doc/science.md section 3 (Ito Euler-Maruyama, Stratonovich Heun, LN-projected)
// with a Gaussian field of kernel kappa, as a run of L steps.
#include "commands.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/studies/token_studies.hpp"

namespace tokdyn {

DeckSchema sde_schema() { return SdeStudy::schema(); }

int run_sde(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<SdeStudy>(comm, schema, request, "sde");
}

}  // namespace tokdyn
