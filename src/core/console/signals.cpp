#include "tokdyn/core/console/signals.hpp"

#include <csignal>
#include <initializer_list>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {
namespace {
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) { g_signal = sig; }
}  // namespace

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // MPI and file calls continue; the flag is polled between steps
  for (int sig : {SIGTERM, SIGUSR1, SIGINT}) sigaction(sig, &action, nullptr);
}

bool stop_signal_received() { return g_signal != 0; }

bool stop_requested(MPI_Comm comm) {
  int flag = g_signal != 0 ? 1 : 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MAX, comm));
  return flag != 0;
}
int last_signal() { return g_signal; }
void reset_stop_signal() { g_signal = 0; }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

}  // namespace tokdyn
