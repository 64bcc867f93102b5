// What a run records about itself: the time per phase (exclusive, nested scopes), the console log (lines
// before the file opens kept), the files beside the output.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "tokdyn/core/console/console_log.hpp"
#include "tokdyn/core/console/phases.hpp"
#include "tokdyn/run/paths.hpp"

namespace tokdyn {
namespace {

void busy(double seconds) {
  const double until = MPI_Wtime() + seconds;
  while (MPI_Wtime() < until) {
  }
}

// The test brackets each scope with its own clock reads, so a busy machine that deschedules it (a parallel ctest)
// lengthens the brackets as much as the phases and cannot make it fail: each phase holds at least its own busy
// time, the inner one at most its bracket, and the two together at most the outer bracket. Scopes that were not
// exclusive would count the inner 0.03 s twice, 0.03 s above the outer bracket.
TEST(Phases, NestedScopesAreExclusive) {
  reset_phase_totals();
  double inner_bracket = 0, outer_bracket = 0;
  {
    const double outer_start = MPI_Wtime();
    {
      PhaseScope outer(Phase::diagnostics);
      busy(0.02);
      const double inner_start = MPI_Wtime();
      {
        PhaseScope inner(Phase::output);
        busy(0.03);
      }
      inner_bracket = MPI_Wtime() - inner_start;
      busy(0.01);
    }
    outer_bracket = MPI_Wtime() - outer_start;
  }
  const PhaseTotals t = phase_totals();
  const double diag = t.seconds[static_cast<int>(Phase::diagnostics)], out = t.seconds[static_cast<int>(Phase::output)];
  // Both read MPI_Wtime: sums of its differences round at about 1e-7 s (seconds since an epoch, in a double).
  const double rounding = 1e-6;
  EXPECT_GE(out, 0.03 - rounding);
  EXPECT_LE(out, inner_bracket + rounding);
  EXPECT_GE(diag, 0.03 - rounding);  // its own 0.02 + 0.01
  EXPECT_LE(diag + out, outer_bracket + rounding) << "the outer phase counted the inner one's time too";
  EXPECT_EQ(t.calls[static_cast<int>(Phase::diagnostics)], 1);
  EXPECT_EQ(t.calls[static_cast<int>(Phase::output)], 1);
  EXPECT_EQ(t.calls[static_cast<int>(Phase::attention)], 0);
  reset_phase_totals();
  EXPECT_EQ(phase_totals().seconds[static_cast<int>(Phase::output)], 0.0);
  EXPECT_STREQ(phase_name(Phase::eigensolve), "eigensolve");
}

TEST(ConsoleLog, HeldLinesThenFileThenAppend) {
  char dir[] = "/tmp/tokdyn_log_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/run.log";
  log_console_line("before the log opened");
  open_console_log(path, "== header ==");
  log_console_line("after");
  close_console_log();
  open_console_log(path, "== second ==");  // a resumed run: appended
  log_console_line("resumed");
  close_console_log();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "== header ==\nbefore the log opened\nafter\n== second ==\nresumed\n");
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(Paths, BesideTheOutput) {
  EXPECT_EQ(log_path("run.h5"), "run.log");
  EXPECT_EQ(log_path("dir/run.x.h5"), "dir/run.x.log");
  EXPECT_EQ(log_path("run.hdf"), "run.hdf.log");
  EXPECT_EQ(beside_output("a.h5", ".rerun.h5"), "a.rerun.h5");
  EXPECT_EQ(beside_output(".h5", ".log"), ".h5.log");
}

}  // namespace
}  // namespace tokdyn
