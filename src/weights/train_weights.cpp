// A WeightSource over a train run file (train_weights.hpp): the GPT's shape from the run's stored deck (root
// attributes model.layers, model.heads, model.channels, model.mlp, train.context), the vocabulary from the
// parameter count, the parameters read whole on the calling rank and cut into tokdyn's orientation by
// train/gpt.hpp's GptLayout (c_attn's weight is [3C, C], Q, K, V by rows; c_proj's [C, C]).
#include "tokdyn/weights/train_weights.hpp"

#include <cmath>
#include <cstdlib>
#include <utility>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/train/gpt.hpp"

namespace tokdyn {
namespace {

std::string where(const std::string& path) { return "train run file '" + path + "'"; }

// A float dataset of `rank` dimensions: its shape (InputError naming it otherwise).
std::vector<hsize_t> float_shape(hid_t dataset, std::size_t rank, const std::string& name, const std::string& path) {
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Dget_type(dataset)));
  const std::vector<hsize_t> shape = h5::dims(dataset);
  if (TOKDYN_H5(H5Tget_class(type)) != H5T_FLOAT || shape.size() != rank)
    throw InputError(where(path) + ": " + name + " is not a " + std::to_string(rank) + "-D real dataset");
  return shape;
}

std::int64_t model_key(hid_t file, const std::string& key, std::int64_t max, const std::string& path) {
  if (!h5::has_attribute(file, key)) throw InputError(where(path) + " has no deck key '" + key + "'");
  const std::int64_t v = h5::read_int_attribute(file, key);
  if (v < 1 || v > max) throw InputError(where(path) + ": " + key + " = " + std::to_string(v) + " is out of range");
  return v;
}

std::vector<std::int64_t> stored_steps(hid_t file, const std::string& path) {
  if (!h5::exists(file, "train/parameters_step")) return {};
  h5::Handle d = h5::open_input_dataset(file, "train/parameters_step", "train run file", path);
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Dget_type(d)));
  const std::vector<hsize_t> shape = h5::dims(d);
  if (TOKDYN_H5(H5Tget_class(type)) != H5T_INTEGER || shape.size() != 1 || shape[0] > (hsize_t(1) << 24))
    throw InputError(where(path) + ": train/parameters_step is not a 1-D integer dataset of at most 2^24 steps");
  std::vector<std::int64_t> steps(shape[0]);
  if (!steps.empty()) h5::read_slab(d, H5T_NATIVE_INT64, steps.data(), 0, shape[0], false);
  return steps;
}

h5::Handle open_run(const std::string& path) {
  h5::Handle file = h5::open_input_file_here(path, "train run file");
  if (!h5::has_attribute(file, "command") || h5::read_string_attribute(file, "command") != "train")
    throw InputError(where(path) + " is not a run file of tokdyn train (its attribute 'command' is not 'train')");
  return file;
}

class TrainWeights final : public WeightSource {
 public:
  TrainWeights(const GptConfig& c, std::vector<double> theta, std::int64_t layers, std::string describe)
      : c_(c), layout_(c), theta_(std::move(theta)), layers_(layers), describe_(std::move(describe)) {}

  int d() const override { return c_.channels; }
  int heads() const override { return c_.heads; }
  int head_dim() const override { return c_.head_dim(); }
  std::int64_t layers() const override { return layers_; }
  bool shared() const override { return false; }
  double score_scale() const override { return 1 / std::sqrt(static_cast<double>(c_.head_dim())); }
  LayerWeights layer(std::int64_t t) const override;
  std::vector<double> output_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override {
    return block(layout_.layer.at(static_cast<std::size_t>(t)).projw, begin, end);
  }
  std::vector<double> value_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override {
    return block(layout_.layer.at(static_cast<std::size_t>(t)).qkvw + 2 * square(), begin, end);
  }
  bool has_embedding() const override { return true; }
  std::vector<double> embedding(const std::vector<std::int64_t>& ids) const override;
  std::int64_t vocab_size() const override { return c_.vocab; }
  std::string describe() const override { return describe_; }

 private:
  std::size_t square() const { return static_cast<std::size_t>(c_.channels) * c_.channels; }
  // Rows [begin, end) of the C x C matrix at `at` in theta.
  std::vector<double> block(std::size_t at, std::int64_t begin, std::int64_t end) const {
    const std::size_t C = c_.channels;
    return {theta_.begin() + static_cast<std::ptrdiff_t>(at + begin * C),
            theta_.begin() + static_cast<std::ptrdiff_t>(at + end * C)};
  }

  GptConfig c_;
  GptLayout layout_;
  std::vector<double> theta_;
  std::int64_t layers_ = 0;
  std::string describe_;
};

// The shape of the stored deck, with the vocabulary from the parameter count `size`.
GptConfig stored_config(hid_t file, std::size_t size, const std::string& path) {
  GptConfig c;
  c.layers = static_cast<int>(model_key(file, "model.layers", 1024, path));
  c.heads = static_cast<int>(model_key(file, "model.heads", 1024, path));
  c.channels = static_cast<int>(model_key(file, "model.channels", 1 << 16, path));
  c.context = static_cast<int>(model_key(file, "train.context", 1 << 20, path));
  if (!h5::has_attribute(file, "model.mlp")) throw InputError(where(path) + " has no deck key 'model.mlp'");
  c.prelu = h5::read_string_attribute(file, "model.mlp") == "prelu";
  if (c.channels % c.heads != 0) throw InputError(where(path) + ": model.channels is not a multiple of model.heads");
  c.vocab = 2;
  const std::size_t rest = GptLayout(c).size - 2 * static_cast<std::size_t>(c.channels);  // all but wte
  const std::size_t C = static_cast<std::size_t>(c.channels);
  if (size <= rest || (size - rest) % C != 0 || (size - rest) / C < 2 || (size - rest) / C > (std::size_t(1) << 31))
    throw InputError(where(path) + ": " + std::to_string(size) + " parameters are no GPT of its deck's shape");
  c.vocab = static_cast<int>((size - rest) / C);
  return c;
}

LayerWeights TrainWeights::layer(std::int64_t t) const {
  const GptLayout::Layer& y = layout_.layer.at(static_cast<std::size_t>(t));
  const std::int64_t C = c_.channels;
  LayerWeights w;
  w.d = c_.channels, w.heads = c_.heads, w.head_dim = c_.head_dim(), w.score_scale = score_scale();
  w.query = block(y.qkvw, 0, C);  // c_attn's rows: Q [C, C], then K, then V ([D, d] each, D = d = C)
  w.key = block(y.qkvw + square(), 0, C);
  w.value = block(y.qkvw + 2 * square(), 0, C);
  w.output = block(y.projw, 0, C);  // c_proj [C, C] = O [d, D]
  return w;
}

std::vector<double> TrainWeights::embedding(const std::vector<std::int64_t>& ids) const {
  const std::size_t C = c_.channels;
  std::vector<double> out;
  out.reserve(ids.size() * C);
  for (std::int64_t id : ids) {
    if (id < 0 || id >= c_.vocab)
      throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(c_.vocab) +
                       ") of " + describe_);
    const auto row = theta_.begin() + static_cast<std::ptrdiff_t>(layout_.wte + static_cast<std::size_t>(id) * C);
    out.insert(out.end(), row, row + static_cast<std::ptrdiff_t>(C));
  }
  return out;
}

std::unique_ptr<WeightSource> read_train_weights(const std::string& path, const std::string& step, int heads,
                                                 std::int64_t layers) {
  h5::Handle file = open_run(path);
  std::vector<hsize_t> shape;
  std::string name = "train/final_parameters", at = "the end";
  std::int64_t row = -1;
  if (step != "last") {
    char* end = nullptr;
    const long long s = std::strtoll(step.c_str(), &end, 10);
    if (step.empty() || *end != '\0' || s < 0)
      throw InputError("weights.step = '" + step + "': not 'last' nor an optimizer step (an integer >= 0)");
    const std::vector<std::int64_t> steps = stored_steps(file, path);
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (steps[i] == s) row = static_cast<std::int64_t>(i);
    if (row < 0) {
      std::string list;
      for (std::int64_t v : steps) list += (list.empty() ? "" : ", ") + std::to_string(v);
      throw InputError(where(path) + " stores no parameters at step " + step +
                       (steps.empty() ? " (it stores none: run it with train.parameters_every > 0)"
                                      : " (it stores steps " + list + ")"));
    }
    name = "train/parameters", at = "step " + step;
  }
  if (!h5::exists(file, name)) throw InputError(where(path) + " has no " + name + " (a run that did not complete?)");
  h5::Handle data = h5::open_input_dataset(file, name, "train run file", path);
  shape = float_shape(data, row < 0 ? 1 : 2, name, path);
  const std::size_t size = shape.back();
  if (size > (std::size_t(1) << 31))
    throw InputError(where(path) + ": " + name + " holds " + std::to_string(size) + " parameters, more than 2^31");
  if (row >= 0 && static_cast<hsize_t>(row) >= shape[0])
    throw InputError(where(path) + ": " + name + " has " + std::to_string(shape[0]) + " rows, step " + step +
                     " is row " + std::to_string(row));
  const GptConfig c = stored_config(file, size, path);
  std::vector<double> theta(size);
  if (row < 0)
    h5::read_slab(data, H5T_NATIVE_DOUBLE, theta.data(), 0, size, false);
  else
    h5::read_series_slab(data, static_cast<hsize_t>(row), H5T_NATIVE_DOUBLE, theta.data(), 0, size, false);
  const std::int64_t bad = first_nonfinite(theta);
  if (bad >= 0) throw InputError(where(path) + ": " + name + " holds NaN or Inf (entry " + std::to_string(bad) + ")");
  if (heads != 0 && heads != c.heads)
    throw InputError("weights.heads = " + std::to_string(heads) + " but the model of " + where(path) + " has " +
                     std::to_string(c.heads) + " (0: the model's)");
  if (layers < 0 || layers > c.layers)
    throw InputError("weights.layers = " + std::to_string(layers) + " but the model of " + where(path) + " has " +
                     std::to_string(c.layers) + " layers");
  std::string describe = "train run '" + path + "' at " + at + ": GPT L = " + std::to_string(c.layers) + ", H = " +
              std::to_string(c.heads) + ", C = " + std::to_string(c.channels) + ", vocabulary " +
              std::to_string(c.vocab);
  return std::make_unique<TrainWeights>(c, std::move(theta), layers ? layers : c.layers, std::move(describe));
}

}  // namespace

TrainRunInfo train_run_info(const std::string& path) {
  h5::Handle file = open_run(path);
  TrainRunInfo info;
  info.stored_steps = stored_steps(file, path);
  info.last_step = model_key(file, "train.steps", std::int64_t(1) << 50, path);
  if (!h5::has_attribute(file, "train.optimizer")) throw InputError(where(path) + " has no deck key 'train.optimizer'");
  std::string biases;
  for (const auto& [key, name] : {std::pair{"bias.query", "b_Q"}, {"bias.key", "b_K"}, {"bias.value", "b_V"}})
    if (h5::has_attribute(file, key) && h5::read_int_attribute(file, key) == 1) biases += (biases.empty() ? "" : " + ") + std::string(name);
  info.label = h5::read_string_attribute(file, "train.optimizer") + ", " + (biases.empty() ? "symmetric" : biases);
  return info;
}

std::unique_ptr<WeightSource> open_train_weights(const std::string& path, const std::string& step, int heads,
                                                 std::int64_t layers) {
  return read_train_weights(path, step, heads, layers);
}

}  // namespace tokdyn
