#include "tokdyn/run/keys.hpp"

#include <cmath>
#include <cstdlib>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

void add_run_keys(DeckSchema& s, const std::string& default_output) {
  s.add_text("run.output", default_output, "run file (HDF5); written as OUTPUT.part until complete").run_control = true;
  s.add_int("run.seed", 1, "seed of every random stream (tokens, weights, noise; replica r derives its own)", 0);
  s.add_text("run.checkpoint", "", "checkpoint file (default: OUTPUT with .h5 -> .ckpt.h5)").run_control = true;
  s.add_int("run.checkpoint_every", 0, "checkpoint every c steps (layers, replicas, ...; 0: only on a signal or stop_at)", 0)
      .run_control = true;
  s.add_real("run.checkpoint_interval", 0.0, "checkpoint when this many seconds have passed since the last one (0: off)",
             0.0)
      .run_control = true;
  s.add_int("run.stop_at", 0, "checkpoint and exit after this step (0: run to the end)", 0).run_control = true;
  s.add_real("run.progress_interval", 10.0, "seconds between progress lines on rank 0", 0.0).run_control = true;
  s.add_int("run.blas_threads", 1, "BLAS threads per rank", 1, 1024).run_control = true;
  s.add_text("run.max_memory", "", "memory a rank may use, e.g. 4GB (empty: what this node has, shared by its ranks); "
             "a run estimated to need more is refused before it allocates")
      .run_control = true;
}

void add_tile_key(DeckSchema& s) { s.add_int("run.tile", 256, "rows per BLAS tile in the all-pairs passes", 1, 1 << 16); }

double max_memory_from_deck(const Deck& deck) {
  const std::string& text = deck.get_text("run.max_memory");
  if (text.empty()) return 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  double scale = -1;
  const char* names[] = {"", "B", "KB", "MB", "GB", "TB"};
  const double scales[] = {1, 1, 1024.0, 1024.0 * 1024, 1024.0 * 1024 * 1024, 1024.0 * 1024 * 1024 * 1024};
  for (int i = 0; i < 6; ++i)
    if (unit == names[i]) scale = scales[i];
  if (end == text.c_str() || scale < 0 || !std::isfinite(value) || value <= 0)
    throw InputError("deck key 'run.max_memory' = '" + text + "': expected a size like 512MB or 4GB");
  return value * scale;
}

}  // namespace tokdyn
