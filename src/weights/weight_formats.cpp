#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/weights/hdf5_weights.hpp"
#include "tokdyn/weights/layer_weights.hpp"
#include "tokdyn/weights/model_weights.hpp"
#include "tokdyn/weights/synthetic_weights.hpp"
#include "tokdyn/weights/train_weights.hpp"
#include "tokdyn/weights/weight_formats.hpp"

namespace tokdyn {
namespace {

// weights.file of a format that reads one: set, an existing regular file, readable.
std::string weights_file(const WeightSpec& spec) {
  const std::string& path = spec.file;
  const std::string& format = spec.format;
  if (path.empty()) throw InputError("weights.format = " + format + " needs weights.file");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError("weights file '" + path + "' (weights.file) does not exist");
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError("weights file '" + path + "' (weights.file) is not a regular file");
  if (::access(path.c_str(), R_OK) != 0) throw InputError("weights file '" + path + "' (weights.file) is not readable");
  return path;
}

std::unique_ptr<WeightSource> safetensors_model(const std::string& model, const WeightSpec& w) {
  ModelWeightsOptions o;
  o.model = model;
  o.path = weights_file(w);
  o.prefix = w.prefix;
  o.heads = w.heads;
  o.layers = w.layers;
  return open_model_weights(o);
}

std::unique_ptr<WeightSource> synthetic(const WeightSpec& w) {
  SyntheticSpec spec = w.synthetic;
  const std::int64_t layers = w.layers;
  if (layers > 0) {
    if (!spec.shared && layers > spec.layers)
      throw InputError("weights.layers = " + std::to_string(layers) + " exceeds the " + std::to_string(spec.layers) +
                       " layer-varying synthetic layers (synthetic.layers)");
    spec.layers = layers;
  }
  const std::int64_t heads = w.heads;
  if (heads > 0 && heads != spec.heads)
    throw InputError("weights.heads = " + std::to_string(heads) + " disagrees with synthetic.heads = " +
                     std::to_string(spec.heads));
  return std::make_unique<SyntheticWeights>(spec);
}

}  // namespace

const WeightFormatRegistry& weight_formats() {
  static const WeightFormatRegistry registry = [] {
    WeightFormatRegistry r("weight format");
    for (const char* model : {"gpt2", "bert", "albert", "gpt-neo"})
      r.add(model, std::string(model) + " safetensors file (HuggingFace names, optional prefix)",
            [model](const WeightSpec& w, MPI_Comm) { return safetensors_model(model, w); });
    r.add("hdf5", "tokdyn's HDF5 layout (/weights/query, key, value, output, embedding)",
          [](const WeightSpec& w, MPI_Comm) { return open_hdf5_weights(weights_file(w), w.heads, w.layers); });
    r.add("train", "a tokdyn train run file's GPT at weights.step (last, or a step of train.parameters_every)",
          [](const WeightSpec& w, MPI_Comm) { return open_train_weights(weights_file(w), w.step, w.heads, w.layers); });
    r.add("synthetic", "synthetic layers with a prescribed spectrum ([synthetic] keys)",
          [](const WeightSpec& w, MPI_Comm) { return synthetic(w); });
    return r;
  }();
  return registry;
}

std::unique_ptr<WeightSource> open_weights(const WeightSpec& spec, MPI_Comm comm) {
  // Every rank opens the source itself; a problem any rank sees stops all of them with its message.
  return read_collectively(comm, [&] { return weight_formats().make(spec.format, spec, comm); });
}

}  // namespace tokdyn
