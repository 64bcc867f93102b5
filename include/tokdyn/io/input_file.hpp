// Files a run reads: only regular files. A directory, a FIFO (it would block for ever), a device
// (/dev/zero never ends) or a socket named as input is refused before it is opened.
#pragma once

#include <cstdint>
#include <string>

namespace tokdyn {

// Local: its size in bytes, or InputError naming key and path unless path is a regular file (an absent one
// gives -1 when absent_ok).
std::int64_t regular_file_size(const std::string& key, const std::string& path, bool absent_ok = false);

}  // namespace tokdyn
