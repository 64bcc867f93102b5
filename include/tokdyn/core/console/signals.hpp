// SIGTERM (Slurm's time limit), SIGUSR1 (Slurm --signal, scancel --signal) and SIGINT ask a run to
// checkpoint at its next step and exit cleanly. The handlers only set a flag, which the run polls
// collectively; they are installed before any work, and a second signal changes nothing but the flag.
#pragma once

#include <mpi.h>

namespace tokdyn {

// Installs the handlers (again after PETSc's initialisation, which installs its own for SIGTERM).
void install_signal_handlers();
bool stop_signal_received();  // this rank's flag
// Collective: true on every rank when some rank has the flag (a poll inside a long step).
bool stop_requested(MPI_Comm comm);
int last_signal();             // number of the last signal received, 0 if none
const char* signal_name(int sig);  // "SIGTERM", ...
void reset_stop_signal();      // for tests

}  // namespace tokdyn
