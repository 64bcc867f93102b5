// Single-dash options go to PETSc/SLEPc (-log_view, -eps_nev 4). One that nothing reads would be ignored
// without a word (-model.N=32 with one dash runs with the deck's N), so such options are refused up front.
#pragma once

#include <petscsys.h>

#include <functional>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"

namespace tokdyn {

class DeckSchema;

// A PETSc object a command configures from the options database (the list: studies/petsc_components.hpp):
// its name ("eps"), what it reads (for the message), the prefixes whose view, monitor, converged-reason and
// error options it queries only at solve or view time, and its probe: a tiny instance set up as the
// command's object is (by the module's own set-up function), its SetFromOptions, then destroyed; the PETSc
// error code when PETSc rejects a value.
struct PetscComponent {
  std::string name, what;
  std::vector<std::string> prefixes;
  std::function<PetscErrorCode(MPI_Comm)> probe;
};

// True when arg, following a single-dash option on the command line, is that option's value ("10", "-1e-8",
// ".5", "krylovschur"), not another option.
bool is_petsc_option_value(const std::string& arg);

// Called once, after SlepcInitialize and before any work. given: the single-dash arguments exactly as they
// were passed to PETSc (Arguments::petsc: options and their values). An option of `given` is accepted when
// PETSc/SLEPc initialisation read it (-help, -log_view, -malloc_dump, ...), when PetscFinalize reads it
// (-options_left, -options_view), when the SetFromOptions of a tiny instance of one of the components reads
// it, or when it is a view, monitor, converged-reason or error option of a component's prefixes, which the
// objects only query at solve or view time (-eps_view, -eps_monitor_all, -eps_converged_reason, -eps_error_*).
// Any other is refused: InputError on every rank (every rank holds the same options), one line naming all of
// them; one that looks like a deck key (a '.' in it, or a section of `schema` at its start) is told that deck
// keys take two dashes. A value PETSc rejects (-eps_type nonsense) is an InputError with PETSc's message.
void refuse_unused_petsc_options(const Comm& comm, const std::string& command,
                                 const std::vector<const PetscComponent*>& components,
                                 const std::vector<std::string>& given,
                                 const DeckSchema& schema);

}  // namespace tokdyn
