#include "tokdyn/run/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/errors/error_exit.hpp"

namespace tokdyn {
namespace {

// A number from the first line of a file (cgroup limits); infinity when absent or "max".
double read_limit(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::numeric_limits<double>::infinity();
  const double v = std::atof(text.c_str());
  // cgroup v1 reports "no limit" as a huge number.
  return v > 0 && v < 1e18 ? v : std::numeric_limits<double>::infinity();
}

double available_on_node() {
  double available = std::numeric_limits<double>::infinity();
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("MemAvailable:", 0) == 0) available = 1024.0 * std::atof(line.c_str() + 13);
  // The job's cgroup (Slurm's memory limit), v2 then v1; this process's own group.
  std::ifstream cgroup("/proc/self/cgroup");
  for (std::string line; std::getline(cgroup, line);) {
    const auto colon = line.rfind(':');
    if (colon == std::string::npos) continue;
    const std::string group = line.substr(colon + 1);
    if (line.rfind("0::", 0) == 0) available = std::min(available, read_limit("/sys/fs/cgroup" + group + "/memory.max"));
    if (line.find(":memory:") != std::string::npos)
      available = std::min(available, read_limit("/sys/fs/cgroup/memory" + group + "/memory.limit_in_bytes"));
  }
  return available;
}

}  // namespace

void MemoryEstimate::add(const std::string& what, double count, double bytes) {
  items_.emplace_back(what, std::max(0.0, count) * bytes);
}

double MemoryEstimate::total() const {
  double t = 0;
  for (const auto& [what, b] : items_) t += b;
  return t;
}

std::string MemoryEstimate::largest(int items) const {
  auto sorted = items_;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (int i = 0; i < items && i < static_cast<int>(sorted.size()); ++i)
    s += (s.empty() ? "" : "; ") + sorted[i].first + ": " + format_bytes(sorted[i].second);
  return s;
}

double memory_per_rank(const Comm& comm, double max_memory) {
  MPI_Comm node;
  TOKDYN_MPI_CHECK(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node));
  int on_node = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_size(node, &on_node));
  TOKDYN_MPI_CHECK(MPI_Comm_free(&node));
  return max_memory > 0 ? max_memory : available_on_node() / on_node;
}

namespace {
double resident_now() {
  std::ifstream statm("/proc/self/statm");
  double pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE));
}
}  // namespace

MemoryEstimate with_process(const MemoryEstimate& estimate) {
  MemoryEstimate need = estimate;
  need.add("held by the process now (libraries, MPI)", resident_now(), 1);
  return need;
}

void require_memory(const Comm& comm, const MemoryEstimate& given, double max_memory) {
  const MemoryEstimate estimate = with_process(given);
  const double limit = memory_per_rank(comm, max_memory), need = estimate.total();
  // A run starts from what the process holds already (libraries, MPI buffers): 10% head room on top.
  const bool ok = need * 1.1 <= limit;
  const std::string why = max_memory > 0 ? "run.max_memory = " + format_bytes(max_memory)
                                         : "this node has " + format_bytes(limit) + " available per rank";
  require_all(comm.get(), ok,
              "this run needs about " + format_bytes(need) + " of memory per rank (" + estimate.largest() +
                  "), more than it may use: " + why + "; make the problem smaller, use more ranks, or set run.max_memory");
}

double peak_memory() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return 1024.0 * static_cast<double>(u.ru_maxrss);
}

}  // namespace tokdyn
