// PETSc's errors as one line: the handler records the first message of an error (PETSC_ERROR_INITIAL)
// instead of printing a trace on every rank, and the failing call becomes a tokdyn error that says it.
#include <petscsys.h>

#include <string>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {
namespace {

std::string g_message;

PetscErrorCode keep_message(MPI_Comm, int line, const char* func, const char* file, PetscErrorCode n,
                            PetscErrorType p, const char* mess, void*) {
  if (p == PETSC_ERROR_INITIAL) g_message = std::string(mess ? mess : "") + " (in " + (func ? func : "?") + ")";
  return n;
}

}  // namespace

void install_petsc_error_handler() { PetscPushErrorHandler(keep_message, nullptr); }

std::string take_petsc_error() {
  std::string m;
  m.swap(g_message);
  return m;
}

}  // namespace tokdyn
