// tokdyn spectrum: the leading eigenpairs of each layer matrix F_t = O_t V_t (doc/science.md sections
// 7.1 and 7.4): eigenvalues, residuals, converged count, spectral gap, real plane of a complex pair, eigenvectors.
#include "commands.hpp"
#include "tokdyn/studies/spectrum_study.hpp"

namespace tokdyn {

DeckSchema spectrum_schema() { return SpectrumStudy::schema(); }

int run_spectrum(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<SpectrumStudy>(comm, schema, request, "spectrum");
}

}  // namespace tokdyn
