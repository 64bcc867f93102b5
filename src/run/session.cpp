#include "tokdyn/run/session.hpp"

#include <slepcsys.h>

#include <cstdio>
#include <cstdlib>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/errors/error_exit.hpp"
#include "tokdyn/core/console/signals.hpp"
#include "tokdyn/io/hdf5.hpp"

namespace tokdyn {

Session::Session(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int argc = static_cast<int>(args.size()) - 1;
  char** data = args.data();
  if (SlepcInitialize(&argc, &data, nullptr, nullptr) != 0) {  // no MPI, so no collective error exit
    std::fprintf(stderr, "tokdyn: error: SlepcInitialize failed (MPI could not start)\n");
    std::exit(kExitInternal);
  }
  // PETSc installed its own handlers (SIGTERM, SIGUSR1 among them) and would put back the default ones in
  // SlepcFinalize, where a second SIGTERM would then kill the process: tokdyn's are the only ones.
  TOKDYN_PETSC_CHECK(PetscPopSignalHandler());
  install_signal_handlers();
  init_error_exit(
      PETSC_COMM_WORLD, [] { return static_cast<int>(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE)); },
      [] { SlepcFinalize(); });
  install_petsc_error_handler();
  h5::silence_errors();
  set_blas_threads(1);
}

Session::~Session() { SlepcFinalize(); }

}  // namespace tokdyn
