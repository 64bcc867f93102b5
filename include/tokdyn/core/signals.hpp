// SIGTERM and SIGUSR1 (Slurm --signal, scancel --signal) ask a run to checkpoint at the next layer
// and exit cleanly. The handler only sets a flag; the run loop polls it collectively.
#pragma once

namespace tokdyn {

void install_checkpoint_signal_handlers();
bool checkpoint_signal_received();  // this rank's flag
int last_signal();                   // number of the signal received, 0 if none
void reset_checkpoint_signal();      // for tests

}  // namespace tokdyn
