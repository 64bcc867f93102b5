// The libraries of a tokdyn process, set up once and in one way for the binary and the test programs:
// SLEPc (with PETSc and MPI) initialised with the given options, tokdyn's signal handlers in place of
// PETSc's, the collective error exit (core/errors/error_exit.hpp), PETSc's errors kept as messages, HDF5's error
// stack quiet, one BLAS thread. SlepcFinalize when the session ends.
#pragma once

#include <string>
#include <vector>

namespace tokdyn {

class Session {
 public:
  // argv: the program's name, then the options PETSc and SLEPc may read.
  explicit Session(std::vector<std::string> argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

}  // namespace tokdyn
