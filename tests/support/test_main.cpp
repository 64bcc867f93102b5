// GoogleTest main for tokdyn's tests: the binary's session (run/session.hpp) around RUN_ALL_TESTS, results
// printed by rank 0 only, and a failure on any rank fails the process on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "tokdyn/run/session.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // takes its --gtest_* options out of argv
  const tokdyn::Session session(std::vector<std::string>(argv, argv + argc));  // the binary's set-up
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
