#include "tokdyn/io/input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

std::int64_t regular_file_size(const std::string& key, const std::string& path, bool absent_ok) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT && absent_ok) return -1;
    throw InputError(key + " '" + path + "' cannot be opened: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    throw InputError(key + " '" + path + "' is " + kind + ": an input must be a regular file");
  }
  return static_cast<std::int64_t>(st.st_size);
}

}  // namespace tokdyn
