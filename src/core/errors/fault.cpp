#include "tokdyn/core/errors/fault.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

void inject_fault(int rank, std::int64_t step, const std::string& unit) {
  static const char* spec = std::getenv("TOKDYN_FAULT");
  if (!spec) return;
  char kind[16] = {0};
  int at_rank = -1;
  long long at_step = -1;
  if (std::sscanf(spec, "%15[a-z]@%d:%lld", kind, &at_rank, &at_step) != 3)
    throw InputError("TOKDYN_FAULT = '" + std::string(spec) + "': expected kind@rank:step");
  static bool fired = false;
  if (fired || rank != at_rank || step < at_step) return;
  fired = true;
  const std::string k = kind, what = "injected fault (" + k + ") at " + unit + " " + std::to_string(step);
  if (k == "system") throw SystemError(what);
  if (k == "alloc") throw std::bad_alloc();
  if (k == "input") throw InputError(what);
  if (k == "signal") {
    std::raise(SIGTERM);  // the handler sets the flag the run polls
    return;
  }
  throw InputError("TOKDYN_FAULT = '" + std::string(spec) + "': kind is system, alloc, input or signal");
}

}  // namespace tokdyn
