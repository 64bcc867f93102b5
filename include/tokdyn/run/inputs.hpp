// The input files a run reads, as they were when it started: for every deck key that names a file
// (texts, token files, weight files, attention weights), its path, size and a content hash. They go into
// the run file (root attribute input_files) and into every checkpoint; a resume, a restart or a rerun whose
// files differ is refused with the file's name, so a run never continues on other data than it began with.
// Only regular files are read: a directory, a FIFO or a device named as input is refused before it is opened
// (a FIFO would block for ever, /dev/zero never ends).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"

namespace tokdyn {

class Deck;

struct InputFile {
  std::string key, path;
  std::int64_t size = -1;  // -1: the file does not exist (a key the run does not use may name none)
  std::string hash;        // 64-bit content hash, hex ("" when absent or not hashed)
};

// Collective: rank 0 looks at every input file the deck names; InputError on every rank when one exists
// but is not a regular file. With hash, rank 0 also reads each file and hashes it (in 1 MiB pieces).
std::vector<InputFile> input_files(const Comm& comm, const Deck& deck, bool hash = true);

// One line per file, "key<TAB>path<TAB>size<TAB>hash", and back (hostile text: InputError naming origin).
std::string inputs_text(const std::vector<InputFile>& files);
std::vector<InputFile> parse_inputs(const std::string& text, const std::string& origin);

// "" when every file recorded in `then` is as it is `now`; else one line naming the first that differs
// and what `then` belongs to ("the checkpoint 'x.ckpt.h5'").
std::string changed_input(const std::vector<InputFile>& then, const std::vector<InputFile>& now,
                          const std::string& what);

}  // namespace tokdyn
