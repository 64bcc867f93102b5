#include "tokdyn/core/errors/error.hpp"

#include <sstream>

namespace tokdyn {

void throw_system_error(const char* library, const char* call, const char* file, int line,
                        const std::string& detail) {
  std::ostringstream s;
  s << library << " call failed: " << call << " at " << file << ":" << line;
  if (!detail.empty()) s << " (" << detail << ")";
  throw SystemError(s.str());
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "unknown MPI error";
  return std::string(text, length);
}

void require_all(MPI_Comm comm, bool ok, const std::string& message) {
  int rank = 0, size = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &size));
  // The lowest failing rank's message is the one every rank reports.
  int mine = ok ? size : rank, first = size;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return;
  std::string text = (rank == first) ? message : std::string();
  int length = static_cast<int>(text.size());
  TOKDYN_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first, comm));
  text.resize(length);
  TOKDYN_MPI_CHECK(MPI_Bcast(text.data(), length, MPI_CHAR, first, comm));
  throw InputError(text, true);
}

}  // namespace tokdyn
