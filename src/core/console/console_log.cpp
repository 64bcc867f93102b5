#include "tokdyn/core/console/console_log.hpp"

#include <cstdio>
#include <vector>

namespace tokdyn {
namespace {

struct ConsoleLog {
  std::vector<std::string> held;  // lines before the log opened (the first few dozen are enough)
  std::FILE* file = nullptr;
};

ConsoleLog& console_log() {
  static ConsoleLog log;
  return log;
}

}  // namespace

void log_console_line(const std::string& line) {
  ConsoleLog& log = console_log();
  if (log.file) {
    std::fprintf(log.file, "%s\n", line.c_str());
    std::fflush(log.file);  // a killed run keeps its log up to the last line
  } else if (log.held.size() < 1000) {
    log.held.push_back(line);
  }
}

void open_console_log(const std::string& path, const std::string& header) {
  ConsoleLog& log = console_log();
  if (log.file) return;
  log.file = std::fopen(path.c_str(), "a");
  if (!log.file) return;
  std::fprintf(log.file, "%s\n", header.c_str());
  for (const std::string& line : log.held) std::fprintf(log.file, "%s\n", line.c_str());
  log.held.clear();
  std::fflush(log.file);
}

void close_console_log() {
  ConsoleLog& log = console_log();
  if (log.file) std::fclose(log.file);
  log.file = nullptr;
}

}  // namespace tokdyn
