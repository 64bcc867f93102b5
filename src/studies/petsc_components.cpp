#include "tokdyn/studies/petsc_components.hpp"

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/petsc/petsc_owned.hpp"
#include "tokdyn/markov/gradient_flow.hpp"
#include "tokdyn/meanfield/circle_grid.hpp"
#include "tokdyn/spectral/eigensolver.hpp"

namespace tokdyn {
namespace {

// A 1 x 1 block per rank, as spectrum's operators are distributed by rows.
PetscErrorCode probe_eps(MPI_Comm comm) {
  PetscFunctionBeginUser;
  OwnedMat matrix;
  OwnedEps eps;
  PetscCall(MatCreateDense(comm, 1, 1, PETSC_DETERMINE, PETSC_DETERMINE, nullptr, matrix.out()));
  PetscCall(MatAssemblyBegin(matrix, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(matrix, MAT_FINAL_ASSEMBLY));
  PetscCall(EPSCreate(comm, eps.out()));
  PetscCall(EPSSetOperators(eps, matrix, nullptr));
  PetscCall(set_up_eps(eps));
  PetscCall(EPSSetFromOptions(eps));
  PetscFunctionReturn(0);
}

// 8 cells per rank (the stencil is 2 wide), with the vectors and the scatter the grid solver makes.
PetscErrorCode probe_dmda(MPI_Comm comm) {
  PetscFunctionBeginUser;
  PetscMPIInt size = 1;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  OwnedDM grid;
  OwnedVec global, local, all;
  OwnedVecScatter to_all;
  PetscCall(create_circle_grid(comm, 8 * size, grid.out()));
  PetscCall(DMCreateGlobalVector(grid, global.out()));
  PetscCall(DMCreateLocalVector(grid, local.out()));
  PetscCall(VecScatterCreateToAll(global, to_all.out(), all.out()));
  PetscFunctionReturn(0);
}

// The adaptive flow (markov's default), on a vector of one entry per rank.
PetscErrorCode probe_ts(MPI_Comm comm) {
  PetscFunctionBeginUser;
  OwnedVec state;
  OwnedTS ts;
  PetscCall(VecCreateMPI(comm, 1, PETSC_DETERMINE, state.out()));
  PetscCall(TSCreate(comm, ts.out()));
  PetscCall(set_up_flow_ts(ts, false));
  PetscCall(TSSetSolution(ts, state));
  PetscCall(TSSetFromOptions(ts));
  PetscFunctionReturn(0);
}

const std::vector<PetscComponent>& components() {
  static const std::vector<PetscComponent> list = {
      {"eps", "a SLEPc eigensolver: -eps_*, -st_*, -bv_*, -ds_*, -rg_*", {"eps", "st", "st_ksp", "bv", "ds", "rg", "mat"},
       probe_eps},
      {"dmda", "a PETSc DMDA grid: -dm_*, -sf_*", {"dm", "sf"}, probe_dmda},
      {"ts", "a PETSc TS integrator: -ts_*", {"ts", "ts_adapt", "snes", "ksp"}, probe_ts},
  };
  return list;
}

}  // namespace

std::vector<const PetscComponent*> petsc_components(const std::vector<std::string>& names) {
  std::vector<const PetscComponent*> used;
  for (const std::string& name : names) {
    const PetscComponent* found = nullptr;
    for (const PetscComponent& c : components())
      if (name == c.name) found = &c;
    if (!found) throw SystemError("no PETSc component '" + name + "'");
    used.push_back(found);
  }
  return used;
}

}  // namespace tokdyn
