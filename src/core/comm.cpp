#include "tokdyn/core/comm.hpp"

#include <cstdio>

#include "tokdyn/core/console_log.hpp"
#include "tokdyn/core/error.hpp"

namespace tokdyn {

Comm::Comm(MPI_Comm comm) : comm_(comm) {
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

void Comm::print(const std::string& line) const {
  if (rank_ != 0) return;
  log_console_line(line);
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void Comm::barrier() const { TOKDYN_MPI_CHECK(MPI_Barrier(comm_)); }

}  // namespace tokdyn
