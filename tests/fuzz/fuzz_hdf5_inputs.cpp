// The HDF5 files a run reads besides checkpoints: initial tokens ([N, d] of floats), tokdyn's weights
// layout (/weights attributes and query, key, value, output, embedding) and a train run file's GPT
// (weights.format = train: the deck's model keys, train/final_parameters, train/parameters and its steps).
// Any type, shape and value in the names a reader looks for: an InputError, or tokens on the sphere and layers
// of the declared shapes.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_support.hpp"
#include "hdf5_builder.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/io/token_file.hpp"
#include "tokdyn/weights/hdf5_weights.hpp"
#include "tokdyn/weights/train_weights.hpp"

using namespace tokdyn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  const std::int64_t n = 1 + in.byte() % 5;
  const int d = 1 + in.byte() % 4, heads = in.byte() % 3;
  const std::int64_t layers = in.byte() % 3;
  fuzz::Hdf5Builder builder(in,
                            {"tokens", "weights/query", "weights/key", "weights/value", "weights/output",
                             "weights/embedding", "weights", "train/final_parameters", "train/parameters",
                             "train/parameters_step"},
                            {"weights/d", "weights/heads", "weights/head_dim", "weights/layers", "weights/shared",
                             "weights/score_scale", "weights/source", "command", "model.layers", "model.heads",
                             "model.channels", "train.context", "model.mlp", "train.steps", "train.optimizer"},
                            {"", "x", "converted", "train", "prelu", "gelu", "ecd"});
  const fuzz::TempFile file("", ".h5");
  builder.write(file.path());
  bool refused = false;
  try {
    std::vector<double> x(static_cast<std::size_t>(n * d));
    (void)read_initial_tokens(file.path(), "tokens", MPI_COMM_SELF, Partition(n, 1), d, x.data());
    for (std::int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < d; ++k) s += x[i * d + k] * x[i * d + k];
      if (!(std::abs(s - 1) < 1e-12)) std::abort();
    }
  } catch (const InputError& e) {
    fuzz::refusal(e.what());
    refused = true;
  }
  try {
    const auto w = open_hdf5_weights(file.path(), heads, layers);
    const std::int64_t D = std::int64_t(w->heads()) * w->head_dim();
    if (w->d() < 1 || D < 1 || w->layers() < 1) std::abort();
    if (std::int64_t(w->d()) * D > (1 << 16)) throw InputError("too large to read here");
    for (std::int64_t t = 0; t < std::min<std::int64_t>(w->layers(), 3); ++t) {
      const LayerWeights l = w->layer(t);
      const std::size_t size = static_cast<std::size_t>(D * w->d());
      if (l.query.size() != size || l.key.size() != size || l.value.size() != size || l.output.size() != size)
        std::abort();
      (void)w->output_rows(t, 0, w->d());
      (void)w->value_rows(t, 0, D);
    }
    if (w->has_embedding() && w->vocab_size() > 0) (void)w->embedding({0, w->vocab_size() - 1});
  } catch (const InputError& e) {
    fuzz::refusal(e.what());
    refused = true;
  }
  // A train run file's GPT at its end or at step 0.
  try {
    const TrainRunInfo info = train_run_info(file.path());
    const auto w = open_train_weights(file.path(), info.stored_steps.empty() ? "last" : "0", heads, layers);
    const std::int64_t D = std::int64_t(w->heads()) * w->head_dim();
    if (w->d() < 1 || D != w->d() || w->layers() < 1 || w->vocab_size() < 2) std::abort();
    for (std::int64_t t = 0; t < w->layers(); ++t) {
      const LayerWeights l = w->layer(t);
      const std::size_t size = static_cast<std::size_t>(D * w->d());
      if (l.query.size() != size || l.key.size() != size || l.value.size() != size || l.output.size() != size)
        std::abort();
    }
    (void)w->embedding({0, w->vocab_size() - 1});
  } catch (const InputError& e) {
    fuzz::refusal(e.what());
    refused = true;
  }
  // A reader that threw leaves its objects open (see close_hdf5_objects); one that never did, none.
  if (fuzz::close_hdf5_objects() > 0 && !refused) std::abort();
  return 0;
}
