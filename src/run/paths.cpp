#include "tokdyn/run/paths.hpp"

#include <unistd.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace fs = std::filesystem;

namespace tokdyn {
namespace {

constexpr std::size_t kMaxName = 200, kMaxPath = 4000;

bool same_file(const std::string& a, const std::string& b) {
  if (absolute_path(a) == absolute_path(b)) return true;
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);  // hard or symbolic links
}

}  // namespace

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) p = fs::absolute(path).lexically_normal();
  return p.string();
}

std::string directory_of(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

std::string beside_output(const std::string& output, const std::string& suffix) {
  const std::string ext = ".h5";
  if (output.size() > ext.size() && output.compare(output.size() - ext.size(), ext.size(), ext) == 0)
    return output.substr(0, output.size() - ext.size()) + suffix;
  return output + suffix;
}

std::string log_path(const std::string& output) { return beside_output(output, ".log"); }

RunPaths run_paths(const Deck& deck, const std::string& output_key) {
  RunPaths p;
  p.output = deck.get_text(output_key);
  if (p.output.empty()) throw InputError("deck key '" + output_key + "' is empty");
  p.partial = p.output + ".part";
  p.lock = p.output + ".lock";
  if (!deck.has("run.checkpoint")) return p;  // a command without checkpoints
  p.checkpoint = deck.get_text("run.checkpoint");
  if (p.checkpoint.empty()) p.checkpoint = beside_output(p.output, ".ckpt.h5");
  return p;
}

void check_run_files(const Comm& comm, const Deck& deck, const std::string& deck_path, const RunPaths& paths,
                     const std::string& output_key) {
  // Rank 0 looks at the file system; every rank gets its answer.
  std::string problem;
  if (comm.root()) {
    struct Named {
      std::string role, path;
      bool input;
    };
    std::vector<Named> files = {{output_key, paths.output, false},
                                {"the partial output", paths.partial, false},
                                {"run.checkpoint", paths.checkpoint, false},
                                {"the lock", paths.lock, false},
                                {"the log", log_path(paths.output), false},
                                {"the checkpoint's temporary file", paths.checkpoint + ".tmp", false},
                                {"the partial output's temporary file", paths.partial + ".tmp", false}};
    if (!paths.checkpoint.empty()) files.push_back({"the checkpoint's lock", paths.checkpoint + ".lock", false});
    for (const auto& [key, path] : deck.input_files()) files.push_back({key, path, true});
    // Names tokdyn gives to a run's own files: an output or checkpoint named so could be another run's
    // partial file, lock, temporary or log (r.h5.part is r.h5's while it runs), so they are refused.
    for (const auto& [role, path] : {std::pair<std::string, std::string>{output_key, paths.output},
                                     {"run.checkpoint", paths.checkpoint}}) {
      if (path.empty()) continue;  // a command without checkpoints
      // Open MPI's shared file pointer names a file of its own after the base name (a 240-character
      // name overflowed its buffer and aborted the run): base names of up to kMaxName leave it room.
      const std::string base = fs::path(path).filename().string();
      if (problem.empty() && base.size() > kMaxName)
        problem = role + " '" + path + "': its file name has " + std::to_string(base.size()) +
                  " characters, more than the " + std::to_string(kMaxName) + " tokdyn allows (MPI-IO adds to it)";
      if (problem.empty() && absolute_path(path).size() > kMaxPath)
        problem = role + " '" + path + "': its absolute path has more than " + std::to_string(kMaxPath) + " characters";
      for (const char* suffix : {".part", ".lock", ".tmp", ".log"}) {
        const std::string s = suffix;
        if (problem.empty() && path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0)
          problem = role + " '" + path + "' ends in " + s + ", a name tokdyn keeps for a run's own " +
                    (s == ".part" ? "partial output" : s == ".lock" ? "lock" : s == ".tmp" ? "temporary files" : "log") +
                    ": choose another name";
      }
    }
    if (!deck_path.empty()) files.push_back({"the deck", deck_path, true});
    for (std::size_t j = 0; j < files.size() && problem.empty(); ++j)
      for (std::size_t i = 0; i < j && problem.empty(); ++i) {
        if (files[i].input && files[j].input) continue;  // reading one file twice is fine
        if (files[i].path.empty() || files[j].path.empty() || files[i].path == ".tmp" || files[j].path == ".tmp") continue;
        if (!same_file(files[i].path, files[j].path)) continue;
        // The file the run writes is named first.
        const Named& a = files[j].input ? files[i] : files[j];
        const Named& b = files[j].input ? files[j] : files[i];
        problem = a.role + " '" + a.path + "' is the same file as " + b.role + " '" + b.path +
                  "': a run's output, checkpoint and input files must be distinct";
      }
    for (const auto& [role, path] : {std::pair<std::string, std::string>{output_key, paths.output},
                                     {"run.checkpoint", paths.checkpoint}}) {
      if (!problem.empty()) break;
      if (path.empty()) continue;
      const std::string dir = directory_of(path);
      std::error_code ec;
      if (!fs::is_directory(dir, ec))
        problem = "directory '" + dir + "' of " + role + " '" + path + "' does not exist";
      else if (::access(dir.c_str(), W_OK | X_OK) != 0)
        problem = "directory '" + dir + "' of " + role + " '" + path + "' is not writable";
    }
  }
  require_all(comm.get(), problem.empty(), problem);
}

}  // namespace tokdyn
