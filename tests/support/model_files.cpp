// Test model files: random weights in tokdyn's orientation (doc/science.md section 7.5), rounded to the dtype,
// then packed into each model's HuggingFace layout by hand (the reference for the adapters' name/orientation
// table).
#include "model_files.hpp"

#include <cmath>
#include <stdexcept>

#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn::test {
namespace {

// Draws tensors one after another from one stream: tensor k uses step k.
class Draws {
 public:
  Draws(std::uint64_t seed, std::string dtype, int d) : rng_(seed, Purpose::test), dtype_(std::move(dtype)), d_(d) {}
  std::vector<double> next(std::size_t n, double scale = -1) {
    std::vector<double> v(n);
    rng_.normals(step_++, 0, v.data(), n);
    const double s = scale > 0 ? scale : 1.0 / std::sqrt(double(d_));
    for (auto& x : v) x = round_to_dtype(s * x, dtype_);
    return v;
  }

 private:
  RandomStream rng_;
  std::string dtype_;
  int d_;
  std::uint64_t step_ = 0;
};

// M^T of M [rows, cols].
std::vector<double> transpose(const std::vector<double>& m, int rows, int cols) {
  std::vector<double> t(m.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t[c * rows + r] = m[r * cols + c];
  return t;
}

}  // namespace

const SafetensorsEntry& ModelFile::tensor(const std::string& name) const {
  for (const auto& e : tensors)
    if (e.name == prefix + name) return e;
  throw std::runtime_error("test model file has no tensor " + prefix + name);
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"gpt2", "bert", "albert", "gpt-neo"};
  return names;
}

const std::vector<std::string>& model_dtypes() {
  static const std::vector<std::string> dtypes = {"F64", "F32", "F16", "BF16"};
  return dtypes;
}

std::string usual_prefix(const std::string& model) {
  if (model == "bert") return "bert.";
  if (model == "albert") return "albert.";
  return "transformer.";
}

ModelFile make_model_file(const std::string& model, const std::string& dtype, const std::string& prefix,
                          std::uint64_t seed) {
  ModelFile m;
  m.model = model;
  m.dtype = dtype;
  m.prefix = prefix;
  const int d = m.d, D = m.d;  // D = H d_h = d in all four models
  const bool albert = model == "albert";
  m.stored_layers = albert ? 1 : 2;
  m.embedding_width = albert ? 8 : d;
  Draws draw(seed, dtype, d);
  auto add = [&](const std::string& name, std::vector<std::int64_t> shape, std::vector<double> values) {
    m.tensors.push_back({prefix + name, dtype, std::move(shape), std::move(values)});
  };
  const std::int64_t d64 = d, D64 = D;

  for (std::int64_t l = 0; l < m.stored_layers; ++l) {
    LayerWeights w;
    w.d = d;
    w.heads = m.heads;
    w.head_dim = d / m.heads;
    w.score_scale = model == "gpt-neo" ? 1.0 : 1.0 / std::sqrt(double(w.head_dim));
    w.query = draw.next(D * d);
    w.key = draw.next(D * d);
    w.value = draw.next(D * d);
    w.output = draw.next(d * D);
    const std::string L = std::to_string(l);
    if (model == "gpt2") {
      // Conv1D y = x W + b with W [in, out]: c_attn [d, 3D] columns Q|K|V, c_proj [D, d].
      std::vector<double> c_attn(static_cast<std::size_t>(d) * 3 * D);
      for (int i = 0; i < d; ++i)
        for (int o = 0; o < D; ++o) {
          c_attn[i * 3 * D + o] = w.query[o * d + i];
          c_attn[i * 3 * D + D + o] = w.key[o * d + i];
          c_attn[i * 3 * D + 2 * D + o] = w.value[o * d + i];
        }
      add("h." + L + ".ln_1.weight", {d64}, draw.next(d));
      add("h." + L + ".attn.c_attn.weight", {d64, 3 * D64}, c_attn);
      add("h." + L + ".attn.c_attn.bias", {3 * D64}, draw.next(3 * D));
      add("h." + L + ".attn.c_proj.weight", {D64, d64}, transpose(w.output, d, D));
      add("h." + L + ".attn.c_proj.bias", {d64}, draw.next(d));
      add("h." + L + ".attn.bias", {1, 1, 4, 4}, draw.next(16));  // the causal-mask buffer of old files
      add("h." + L + ".mlp.c_fc.weight", {d64, 4 * d64}, draw.next(4 * d * d));
    } else if (model == "bert") {
      // nn.Linear y = W x + b with W [out, in].
      const std::string p = "encoder.layer." + L + ".attention.";
      add(p + "self.query.weight", {D64, d64}, w.query);
      add(p + "self.query.bias", {D64}, draw.next(D));
      add(p + "self.key.weight", {D64, d64}, w.key);
      add(p + "self.value.weight", {D64, d64}, w.value);
      add(p + "output.dense.weight", {d64, D64}, w.output);
      add(p + "output.dense.bias", {d64}, draw.next(d));
      add(p + "output.LayerNorm.weight", {d64}, draw.next(d));
      add("encoder.layer." + L + ".intermediate.dense.weight", {4 * d64, d64}, draw.next(4 * d * d));
    } else if (albert) {
      const std::string p = "encoder.albert_layer_groups.0.albert_layers.0.attention.";
      add(p + "query.weight", {D64, d64}, w.query);
      add(p + "key.weight", {D64, d64}, w.key);
      add(p + "key.bias", {D64}, draw.next(D));
      add(p + "value.weight", {D64, d64}, w.value);
      add(p + "dense.weight", {d64, D64}, w.output);
      add(p + "LayerNorm.weight", {d64}, draw.next(d));
      add("encoder.albert_layer_groups.0.albert_layers.0.ffn.weight", {4 * d64, d64}, draw.next(4 * d * d));
    } else if (model == "gpt-neo") {
      const std::string p = "h." + L + ".attn.attention.";
      add(p + "k_proj.weight", {D64, d64}, w.key);
      add(p + "v_proj.weight", {D64, d64}, w.value);
      add(p + "q_proj.weight", {D64, d64}, w.query);
      add(p + "out_proj.weight", {d64, D64}, w.output);
      add(p + "out_proj.bias", {d64}, draw.next(d));
      add("h." + L + ".ln_1.weight", {d64}, draw.next(d));
    } else {
      throw std::invalid_argument("make_model_file: unknown model " + model);
    }
    m.layers.push_back(std::move(w));
  }

  const int E = m.embedding_width, V = m.vocab;
  const std::vector<double> table = draw.next(static_cast<std::size_t>(V) * E, 1.0);
  if (model == "gpt2" || model == "gpt-neo") {
    add("wte.weight", {V, d64}, table);
    add("wpe.weight", {16, d64}, draw.next(16 * d));
    m.embedding = table;
  } else if (model == "bert") {
    add("embeddings.word_embeddings.weight", {V, d64}, table);
    add("embeddings.position_embeddings.weight", {16, d64}, draw.next(16 * d));
    m.embedding = table;
  } else {
    // ALBERT: embeddings of size E mapped to d by x = W e + b, W [d, E].
    const std::vector<double> map = draw.next(static_cast<std::size_t>(d) * E), bias = draw.next(d);
    add("embeddings.word_embeddings.weight", {V, E}, table);
    add("encoder.embedding_hidden_mapping_in.weight", {d64, E}, map);
    add("encoder.embedding_hidden_mapping_in.bias", {d64}, bias);
    m.embedding.resize(static_cast<std::size_t>(V) * d);
    for (int v = 0; v < V; ++v)
      for (int a = 0; a < d; ++a) {
        long double s = bias[a];
        for (int k = 0; k < E; ++k) s += static_cast<long double>(map[a * E + k]) * table[v * E + k];
        m.embedding[v * d + a] = static_cast<double>(s);
      }
  }
  return m;
}

void write_model_file(const std::string& path, const ModelFile& file) {
  write_safetensors(path, file.tensors, {{"format", "pt"}});
}

}  // namespace tokdyn::test
