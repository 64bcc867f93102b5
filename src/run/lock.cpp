#include "tokdyn/run/lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/errors/error_exit.hpp"

namespace tokdyn {
namespace {

std::string host_name() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::map<std::string, std::string> read_lock(const std::string& path) {
  std::map<std::string, std::string> fields;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return fields;
}

// Why a lock's holder is gone ("" when it may be alive): a process of this host that no longer exists or
// is no tokdyn, or an earlier start of this very Slurm job.
std::string stale_reason(const std::map<std::string, std::string>& lock) {
  const char* job = std::getenv("SLURM_JOB_ID");
  const auto j = lock.find("slurm_job");
  if (job && *job && j != lock.end() && j->second == job) return "an earlier start of Slurm job " + j->second;
  const auto h = lock.find("host"), p = lock.find("pid");
  if (h == lock.end() || p == lock.end() || h->second != host_name()) return "";
  const long pid = std::atol(p->second.c_str());
  if (pid <= 0) return "no such process";
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return "no such process";
  // A process that exited but is not yet reaped (a zombie) is gone too.
  std::ifstream stat("/proc/" + p->second + "/stat");
  std::string line;
  if (std::getline(stat, line)) {
    const auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && (line[close + 2] == 'Z' || line[close + 2] == 'X'))
      return "no such process";
  }
  std::ifstream cmdline("/proc/" + p->second + "/cmdline");
  std::string command;
  std::getline(cmdline, command, '\0');
  if (stat && command.find("tokdyn") == std::string::npos) return "pid " + p->second + " is another program now";
  return "";
}

std::string holder(const std::map<std::string, std::string>& lock) {
  auto get = [&](const char* k) {
    const auto it = lock.find(k);
    return it == lock.end() ? std::string("?") : it->second;
  };
  std::string s = "pid " + get("pid") + " on host " + get("host") + " since " + get("started") + " (run id " +
                  get("run_id") + ")";
  if (lock.count("slurm_job") && !lock.at("slurm_job").empty()) s += ", Slurm job " + lock.at("slurm_job");
  return s;
}

}  // namespace

namespace {
std::string in_use(const std::map<std::string, std::string>& lock, const std::string& path, const std::string& what) {
  return what + " '" + path.substr(0, path.size() - 5) + "' is in use: lock '" + path + "' held by " + holder(lock) +
         "; wait for that run to end (or, if it is gone, remove the lock)";
}
}  // namespace

void RunLock::acquire(const Comm& comm, const std::string& path, const std::string& run_id, const std::string& what) {
  path_ = path;
  std::string problem, note;
  if (comm.root()) {
    char started[32] = {0};
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    std::strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%S", &tm);
    const char* job = std::getenv("SLURM_JOB_ID");
    std::ostringstream text;
    text << "host=" << host_name() << "\npid=" << ::getpid() << "\nstarted=" << started << "\nrun_id=" << run_id
         << "\nslurm_job=" << (job ? job : "") << "\n";
    for (int attempt = 0; attempt < 2 && !held_ && problem.empty(); ++attempt) {
      const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
      if (fd >= 0) {
        const std::string s = text.str();
        const bool ok = ::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size());
        ::close(fd);
        if (!ok) {
          ::unlink(path.c_str());
          problem = "cannot write the lock '" + path + "'";
        }
        held_ = ok;
        break;
      }
      if (errno != EEXIST) {
        problem = "cannot create the lock '" + path + "': " + std::strerror(errno);
        break;
      }
      const auto lock = read_lock(path);
      const std::string why = stale_reason(lock);
      if (why.empty()) {
        problem = in_use(lock, path, what);
        break;
      }
      note = "removed the stale lock '" + path + "' of " + holder(lock) + " (" + why + ")";
      ::unlink(path.c_str());
    }
    if (!note.empty() && held_) std::printf("tokdyn: %s\n", note.c_str()), std::fflush(stdout);
  }
  require_all(comm.get(), problem.empty(), problem);
  if (held_) cleanup_ = add_exit_cleanup([p = path_] { ::unlink(p.c_str()); });
}

void RunLock::check(const Comm& comm, const std::string& path, const std::string& what) {
  std::string problem;
  if (comm.root() && ::access(path.c_str(), F_OK) == 0) {
    const auto lock = read_lock(path);
    if (stale_reason(lock).empty()) problem = in_use(lock, path, what);
  }
  require_all(comm.get(), problem.empty(), problem);
}

void RunLock::release() {
  if (held_) ::unlink(path_.c_str());
  held_ = false;
  if (cleanup_ >= 0) remove_exit_cleanup(cleanup_);
  cleanup_ = -1;
}

std::string RunLock::describe(const std::string& path, bool& alive) {
  alive = false;
  if (::access(path.c_str(), F_OK) != 0) return "";
  const auto lock = read_lock(path);
  alive = stale_reason(lock).empty();
  return holder(lock);
}

}  // namespace tokdyn
