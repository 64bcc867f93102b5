// GoogleTest main for tokdyn's tests: MPI (through PETSc/SLEPc) around RUN_ALL_TESTS, results printed
// by rank 0 only, and a failure on any rank fails the process on every rank.
#include <gtest/gtest.h>
#include <slepcsys.h>

#include "tokdyn/core/blas.hpp"
#include "tokdyn/io/hdf5.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  PetscCall(SlepcInitialize(&argc, &argv, nullptr, nullptr));
  tokdyn::h5::silence_errors();
  tokdyn::set_blas_threads(1);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  PetscCall(SlepcFinalize());
  return any_failed;
}
