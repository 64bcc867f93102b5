#include "tokdyn/core/signals.hpp"

#include <csignal>

namespace tokdyn {
namespace {
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) { g_signal = sig; }
}  // namespace

void install_checkpoint_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // MPI and file calls continue; the flag is polled between layers
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

bool checkpoint_signal_received() { return g_signal != 0; }
int last_signal() { return g_signal; }
void reset_checkpoint_signal() { g_signal = 0; }

}  // namespace tokdyn
