// Splits a command's arguments into the deck, its --section.key=value overrides, tokdyn's own flags,
// and the single-dash options that go to PETSc/SLEPc untouched.
#pragma once

#include <string>
#include <vector>

#include "tokdyn/run/run.hpp"

namespace tokdyn {

struct Arguments {
  RunRequest request;
  bool help = false;
  std::vector<std::string> petsc;  // e.g. -log_view, -eps_nev 10
};

// args: everything after the command name.
Arguments split_arguments(const std::vector<std::string>& args);

}  // namespace tokdyn
