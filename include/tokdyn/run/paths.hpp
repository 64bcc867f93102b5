// The files of a run: the output, OUTPUT.part while it is written, the checkpoint, and OUTPUT.lock.
#pragma once

#include <string>

namespace tokdyn {

class Deck;
class Comm;

struct RunPaths {
  std::string output, partial, checkpoint, lock;
};

// From run.output (or the command's own output key) and run.checkpoint (default: OUTPUT with .h5 -> .ckpt.h5).
RunPaths run_paths(const Deck& deck, const std::string& output_key = "run.output");
// A file beside the output: OUTPUT with .h5 replaced by suffix (".log": x.h5 -> x.log), or suffix appended
// to an output of another extension.
std::string beside_output(const std::string& output, const std::string& suffix);
// The run's log file, beside_output(output, ".log").
std::string log_path(const std::string& output);

// Absolute and lexically normal (the file need not exist).
std::string absolute_path(const std::string& path);
// The directory of a file path ("." for a bare name).
std::string directory_of(const std::string& path);

// Collective: InputError on every rank when two of the files a run writes, or one of them and a file
// the deck names as input (or the deck itself), are the same file; when the directory of the output or
// of the checkpoint does not exist or cannot be written.
void check_run_files(const Comm& comm, const Deck& deck, const std::string& deck_path, const RunPaths& paths,
                     const std::string& output_key = "run.output");

}  // namespace tokdyn
