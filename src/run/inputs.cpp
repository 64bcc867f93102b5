#include "tokdyn/run/inputs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/input_file.hpp"

namespace tokdyn {
namespace {

// 64-bit words mixed (splitmix64's finaliser) into an FNV-style chain, then the tail and the length: not
// cryptographic, but any change of content or length changes it with probability 1 - 2^-64, at memory speed.
std::uint64_t mix(std::uint64_t w) {
  w ^= w >> 30;
  w *= 0xbf58476d1ce4e5b9ull;
  w ^= w >> 27;
  w *= 0x94d049bb133111ebull;
  return w ^ (w >> 31);
}

std::string hash_file(const std::string& key, const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) throw InputError(key + " '" + path + "' cannot be opened: " + std::strerror(errno));
  std::vector<unsigned char> buf(1 << 20);
  std::uint64_t h = 0x9e3779b97f4a7c15ull, length = 0;
  for (;;) {
    const ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;  // a signal is polled later, at the run's first step
    if (got < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(key + " '" + path + "' cannot be read: " + std::strerror(err));
    }
    if (got == 0) break;
    std::size_t k = 0;
    for (; k + 8 <= static_cast<std::size_t>(got); k += 8) {
      std::uint64_t w;
      std::memcpy(&w, buf.data() + k, 8);
      h = (h ^ mix(w)) * 0x100000001b3ull;
    }
    // A piece ends on a multiple of 8 except the file's last one (read() of a regular file fills the buffer).
    for (; k < static_cast<std::size_t>(got); ++k) h = (h ^ buf[k]) * 0x100000001b3ull;
    length += static_cast<std::uint64_t>(got);
  }
  ::close(fd);
  h = mix(h ^ length);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace

std::vector<InputFile> input_files(const Comm& comm, const Deck& deck, bool hash) {
  std::vector<InputFile> files;
  std::string problem;
  if (comm.root()) {
    try {
      for (const auto& [key, path] : deck.input_files()) {
        InputFile f{key, path, regular_file_size(key, path, true), ""};
        if (hash && f.size >= 0) f.hash = hash_file(key, path);
        files.push_back(f);
      }
    } catch (const InputError& e) {
      problem = e.what();
    }
  }
  require_all(comm.get(), problem.empty(), problem);
  std::string text = comm.root() ? inputs_text(files) : std::string();
  comm.broadcast(text);
  return parse_inputs(text, "the input files");
}

std::string inputs_text(const std::vector<InputFile>& files) {
  std::string text;
  for (const InputFile& f : files)
    text += f.key + "\t" + f.path + "\t" + std::to_string(f.size) + "\t" + f.hash + "\n";
  return text;
}

std::vector<InputFile> parse_inputs(const std::string& text, const std::string& origin) {
  std::vector<InputFile> files;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::size_t begin = 0;
    for (std::size_t tab; (tab = line.find('\t', begin)) != std::string::npos; begin = tab + 1)
      fields.push_back(line.substr(begin, tab - begin));
    fields.push_back(line.substr(begin));
    InputFile f;
    bool ok = fields.size() == 4;
    if (ok) {
      f.key = fields[0], f.path = fields[1], f.hash = fields[3];
      char* end = nullptr;
      errno = 0;
      const long long size = std::strtoll(fields[2].c_str(), &end, 10);
      ok = errno == 0 && end != fields[2].c_str() && *end == '\0' && size >= -1;
      f.size = size;
    }
    if (!ok) throw InputError(origin + ": damaged record of the input files: '" + line + "'");
    files.push_back(f);
  }
  return files;
}

std::string changed_input(const std::vector<InputFile>& then, const std::vector<InputFile>& now, const std::string& what) {
  for (const InputFile& a : then)
    for (const InputFile& b : now) {
      if (a.key != b.key) continue;
      std::string how;
      if (a.size < 0 && b.size >= 0) how = "it did not exist then";
      else if (a.size >= 0 && b.size < 0) how = "it is gone";
      else if (a.size != b.size) how = std::to_string(a.size) + " bytes then, " + std::to_string(b.size) + " now";
      else if (a.hash != b.hash) how = "same size, other content (hash " + a.hash + " then, " + b.hash + " now)";
      if (!how.empty())
        return "input file '" + b.path + "' (" + b.key + ") is not the one " + what + " was made from: " + how +
               "; put the original back, or start the run again (--force)";
    }
  return "";
}

}  // namespace tokdyn
