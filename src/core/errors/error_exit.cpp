#include "tokdyn/core/errors/error_exit.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <set>
#include <thread>
#include <vector>

#include "tokdyn/core/console/console_log.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {
namespace {

MPI_Comm g_comm = MPI_COMM_NULL;
std::function<int()> g_open_objects;
std::function<void()> g_finalize;
std::map<int, std::function<void()>> g_cleanups;
int g_next_cleanup = 0;
std::set<std::string> g_watched;
constexpr int kTagFailed = 101;

// How long a failing rank waits for the others before it aborts the job: long enough for every rank of
// an error they all see to reach the agreement, short enough to end a job stuck in a collective call.
double agreement_seconds() {
  const char* s = std::getenv("TOKDYN_ERROR_WAIT");
  return s ? std::atof(s) : 3.0;
}

void print_line(const std::string& message) {
  log_console_line("tokdyn: error: " + message);
  std::fprintf(stderr, "tokdyn: error: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace

void init_error_exit(MPI_Comm world, std::function<int()> open_objects, std::function<void()> finalize) {
  MPI_Comm_dup(world, &g_comm);
  g_open_objects = std::move(open_objects);
  g_finalize = std::move(finalize);
}

int add_exit_cleanup(std::function<void()> cleanup) {
  g_cleanups[g_next_cleanup] = std::move(cleanup);
  return g_next_cleanup++;
}

void remove_exit_cleanup(int id) { g_cleanups.erase(id); }

void exit_on_exception(std::exception_ptr error) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    // What a user can fix (the deck, a file, the disk).
    exit_on_error(kExitInput, e.what());
  } catch (const std::bad_alloc&) {
    exit_on_error(kExitInput, "rank " + std::to_string(rank) +
                                  ": out of memory (a run this size needs more than this rank can get; see "
                                  "run.max_memory)");
  } catch (const std::exception& e) {
    // A failed library call: a full disk is the user's to fix; anything else is ours.
    const std::string full = full_disk_message();
    if (!full.empty()) exit_on_error(kExitInput, full);
    exit_on_error(kExitInternal, "rank " + std::to_string(rank) + ": internal error: " + std::string(e.what()));
  }
  exit_on_error(kExitInternal, "rank " + std::to_string(rank) + ": internal error: an exception of unknown type");
}

void exit_on_error(int code, const std::string& message) {
  std::fflush(stdout);
  for (auto& [id, cleanup] : g_cleanups) {
    try {
      cleanup();
    } catch (...) {  // cleaning up is best effort: the error being reported matters more
    }
  }
  if (g_comm == MPI_COMM_NULL) {
    print_line(message);
    std::_Exit(code);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(g_comm, &rank);
  MPI_Comm_size(g_comm, &size);
  // Higher ranks learn that a lower one failed: only the lowest failing rank prints when the job aborts.
  static int failed = 1;
  std::vector<MPI_Request> notices(size > rank + 1 ? size - rank - 1 : 0);
  for (int r = rank + 1; r < size; ++r) MPI_Isend(&failed, 1, MPI_INT, r, kTagFailed, g_comm, &notices[r - rank - 1]);
  MPI_Request barrier;
  MPI_Ibarrier(g_comm, &barrier);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(agreement_seconds());
  bool everyone = false, lower_failed = false;
  do {
    int done = 0, notice = 0;
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    everyone = done != 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagFailed, g_comm, &notice, &status);
    if (notice) {
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, status.MPI_SOURCE, kTagFailed, g_comm, MPI_STATUS_IGNORE);
      lower_failed = true;
    }
    if (!everyone) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } while (!everyone && std::chrono::steady_clock::now() < deadline);
  if (everyone) {
    // Every rank failed: one line, from rank 0. MPI_Finalize closes the HDF5 files an unwinding left
    // open, collectively: only when every rank holds as many (the same error on every rank).
    if (rank == 0) print_line(message);
    std::fflush(stdout);
    int open[2] = {g_open_objects ? g_open_objects() : 0, 0};
    open[1] = -open[0];
    MPI_Allreduce(MPI_IN_PLACE, open, 2, MPI_INT, MPI_MIN, g_comm);
    if (open[0] == -open[1] && g_finalize) {
      MPI_Comm_free(&g_comm);
      g_finalize();
    }
    std::_Exit(code);
  }
  if (!lower_failed) print_line(message);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void watch_directory(const std::string& dir) { g_watched.insert(dir.empty() ? "." : dir); }

double free_bytes(const std::string& dir) {
  struct statvfs s {};
  if (statvfs(dir.empty() ? "." : dir.c_str(), &s) != 0) return -1;
  return static_cast<double>(s.f_bavail) * static_cast<double>(s.f_frsize);
}

std::string full_disk_message() {
  for (const std::string& dir : g_watched) {
    const double free = free_bytes(dir);
    // HDF5 and MPI-IO report a full disk as a failed write: a file system with (almost) no room left is
    // the reason to give.
    if (free >= 0 && free < 64.0 * 1024) return "no space left on the device of '" + dir + "' (" + format_bytes(free) + " free)";
  }
  return "";
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) bytes /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
  return buf;
}

}  // namespace tokdyn
