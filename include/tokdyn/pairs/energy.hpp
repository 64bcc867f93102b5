// The interaction energy E_beta = (1/2N^2) sum_ij (e^beta - e^{beta <x_i, x_j>}) of doc/science.md section 1.3,
// summed by every all-pairs diagnostic as s = E_beta e^{-beta} so that no e^beta-sized term is ever added.
#pragma once

namespace tokdyn {

// log(DBL_MAX) = 709.78: E_beta is up to e^beta (about e^beta / 2 for spread tokens), which overflows a
// double above it; attention.beta stops here.
double max_energy_beta();
// E_beta from s = E_beta e^{-beta} (for unit tokens s = (1/2N^2) sum_ij -expm1(beta (<x_i, x_j> - 1)), in
// [0, 1]): sign(s) exp(beta + log |s|), 0 for s = 0. Nothing overflows below max_energy_beta().
double energy_from_scaled(double beta, double s);

}  // namespace tokdyn
