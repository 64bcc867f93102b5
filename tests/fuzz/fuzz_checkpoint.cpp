// Checkpoint restore: a file with a checkpoint's names (identity attributes, /state datasets and attributes,
// /run_file) of any type, shape and value. The reader refuses with an InputError, or what it returns is
// what a restore may use: an identity inside its bounds, arrays of the size asked for.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_support.hpp"
#include "hdf5_builder.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/io/checkpoint.hpp"

using namespace tokdyn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  const std::int64_t rows = in.byte() % 5, width = in.byte() % 4, expected = in.byte() % 8;
  fuzz::Hdf5Builder builder(
      in, {"state/x", "state/theta", "state/series", "run_file", "state"},
      {"format", "complete", "command", "run_id", "output", "checkpoint", "deck", "deck_hash", "unit", "written",
       "step", "steps", "ranks", "inputs", "state/t", "state/name", "state/count"},
      {"tokdyn-checkpoint-2", "tokdyn-checkpoint-1", "markov", "layer", "", "x", "[run]\nseed = 1\n"});
  const fuzz::TempFile file("", ".ckpt.h5");
  builder.write(file.path());
  bool refused = false;  // an InputError anywhere
  const auto attempt = [&](const auto& read) {
    try {
      read();
    } catch (const InputError& e) {
      fuzz::refusal(e.what());
      refused = true;
    }
  };
  attempt([&] {
    const CheckpointReader r(file.path(), MPI_COMM_SELF);
    const CheckpointIdentity& id = r.identity();
    if (id.steps < 1 || id.step < 0 || id.step > id.steps || id.ranks < 1) std::abort();
    for (const char* name : {"theta", "series", "x"}) {
      attempt([&] {
        if (r.values(name, expected).size() != static_cast<std::size_t>(expected)) std::abort();
      });
      attempt([&] {
        if (r.integers(name, expected).size() != static_cast<std::size_t>(expected)) std::abort();
      });
    }
    attempt([&] {
      std::vector<double> local(static_cast<std::size_t>(rows * width));
      r.rows("x", local.data(), Partition(rows, 1), static_cast<int>(width));
    });
    for (const char* name : {"t", "name", "count"}) {
      attempt([&] { (void)r.int_attribute(name); });
      attempt([&] { (void)r.real_attribute(name); });
      attempt([&] { (void)r.text_attribute(name); });
    }
    const fuzz::TempFile restored("", ".h5");
    attempt([&] { r.restore_run_file(restored.path()); });
  });
  // A reader that threw leaves its objects open (see close_hdf5_objects); one that never did, none.
  if (fuzz::close_hdf5_objects() > 0 && !refused) std::abort();
  return 0;
}
