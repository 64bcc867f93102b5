// The PETSc objects tokdyn's commands configure from single-dash options (core/petsc/petsc_options.hpp), each
// probed through the set-up of the module that owns it:
//   "eps"   a SLEPc EPS (Krylov-Schur, NHEP) on a matrix, with its ST, BV, DS and RG (spectrum, power)
//   "dmda"  the mean-field grid's periodic 1-d DMDA with its vectors and scatter-to-all (meanfield, converge)
//   "ts"    the gradient flow's TS (adaptive RK 5(4)) on a vector (markov)
#pragma once

#include <string>
#include <vector>

#include "tokdyn/core/petsc/petsc_options.hpp"

namespace tokdyn {

// The components of these names, in order; SystemError for a name that is none of them.
std::vector<const PetscComponent*> petsc_components(const std::vector<std::string>& names);

}  // namespace tokdyn
