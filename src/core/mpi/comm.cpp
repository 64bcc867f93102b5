#include "tokdyn/core/mpi/comm.hpp"

#include <algorithm>
#include <cstdio>

#include "tokdyn/core/console/console_log.hpp"
#include "tokdyn/core/errors/error.hpp"

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

void Comm::log(const std::string& line) const {
  if (rank_ == 0) log_console_line(line);
}

void Comm::barrier() const { TOKDYN_MPI_CHECK(MPI_Barrier(comm_)); }

void Comm::broadcast(std::string& text) const {
  unsigned long long length = text.size();
  TOKDYN_MPI_CHECK(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_));
  text.resize(length);
  // In pieces below INT_MAX bytes (MPI counts are int).
  for (unsigned long long done = 0; done < length;) {
    const int piece = static_cast<int>(std::min<unsigned long long>(length - done, 1ull << 30));
    TOKDYN_MPI_CHECK(MPI_Bcast(text.data() + done, piece, MPI_CHAR, 0, comm_));
    done += piece;
  }
}

}  // namespace tokdyn
