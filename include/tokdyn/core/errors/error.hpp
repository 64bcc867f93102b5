// Errors and the check macros every library call goes through.
// InputError is what a user can fix (deck, files, options): exit code 2 on every rank.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace tokdyn {

// A problem with the user's input or with the state of a run (NaN): every rank that sees it
// throws it, the run stops cleanly with exit code 2 and a one-line message.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what, bool agreed = false) : std::runtime_error(what), agreed_(agreed) {}
  // True when every rank throws it at the same point (require_all): a collective clean-up is then safe.
  bool agreed() const { return agreed_; }

 private:
  bool agreed_;
};

// A failed library call (MPI, HDF5, PETSc): a bug or a broken machine, not the user's fault.
class SystemError : public std::runtime_error {
 public:
  explicit SystemError(const std::string& what) : std::runtime_error(what) {}
};

[[noreturn]] void throw_system_error(const char* library, const char* call, const char* file, int line,
                                     const std::string& detail = "");

// Collective agreement: throws InputError(message) on every rank if any rank has ok == false.
// Used where only some ranks can see a problem (a slab of a file, NaN in local tokens).
void require_all(MPI_Comm comm, bool ok, const std::string& message);

}  // namespace tokdyn

#define TOKDYN_MPI_CHECK(call)                                                        \
  do {                                                                                \
    int tokdyn_mpi_rc_ = (call);                                                      \
    if (tokdyn_mpi_rc_ != MPI_SUCCESS)                                                \
      ::tokdyn::throw_system_error("MPI", #call, __FILE__, __LINE__,                  \
                                   ::tokdyn::mpi_error_string(tokdyn_mpi_rc_));       \
  } while (0)

// PETSc calls from code that does not itself return PetscErrorCode; the error names PETSc's message.
#define TOKDYN_PETSC_CHECK(call)                                                                       \
  do {                                                                                                 \
    PetscErrorCode tokdyn_petsc_rc_ = (call);                                                          \
    if (tokdyn_petsc_rc_)                                                                              \
      ::tokdyn::throw_system_error("PETSc", #call, __FILE__, __LINE__, ::tokdyn::take_petsc_error()); \
  } while (0)

namespace tokdyn {
std::string mpi_error_string(int code);
// PETSc reports its errors through a handler that keeps the first message (no multi-line trace on
// stderr); TOKDYN_PETSC_CHECK takes it into the error it throws.
void install_petsc_error_handler();
std::string take_petsc_error();
}
