// Fault injection, a testing aid for the error and signal paths: TOKDYN_FAULT=kind@rank:step makes that
// rank alone fail once the run has done that many steps (or more: a round of replicas does several), as
// a real failure would: kind system (an internal error: a library call failed), alloc (std::bad_alloc),
// input (an input error seen by one rank only), or signal (the rank receives SIGTERM).
#pragma once

#include <cstdint>
#include <string>

namespace tokdyn {

// Called by the run after each step; throws when TOKDYN_FAULT names this rank and step.
void inject_fault(int rank, std::int64_t step, const std::string& unit);

}  // namespace tokdyn
