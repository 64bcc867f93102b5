// WeightSource over a HuggingFace safetensors file: the per-model table of tensor names and
// orientations (see model_weights.hpp), the checks of names and shapes, and row reads in tokdyn's orientation
// (doc/science.md section 7.5).
#include "tokdyn/weights/model_weights.hpp"

#include <cmath>
#include <stdexcept>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {
namespace {

// Where one matrix M [R, C] in tokdyn's orientation lives (Q, K, V: [D, d]; O: [d, D]). The tensor's name has
// "{l}" for the layer. stored_in_out: the tensor is [C, blocks R] ([in, out], M = slice^T) and M is its
// columns [block R, (block+1) R); otherwise it is [blocks R, C] ([out, in]) and M its rows likewise.
struct MatrixPlace {
  const char* tensor;
  bool stored_in_out;
  int block, blocks;
};

struct ModelLayout {
  const char* model;
  const char* usual_prefix;
  const char* layer_stem;  // the names of layer l start with stem + l + "."; null for a shared layer
  MatrixPlace query, key, value, output;
  const char* embedding;          // [vocab, d], or [vocab, E] mapped to d
  const char* mapping = nullptr;  // ALBERT: [d, E] and its bias [d]: x = W e + b
  const char* mapping_bias = nullptr;
  bool scaled_scores = true;  // logits / sqrt(d_h)
};

const ModelLayout layouts[] = {
    {"gpt2", "transformer.", "h.",
     {"h.{l}.attn.c_attn.weight", true, 0, 3}, {"h.{l}.attn.c_attn.weight", true, 1, 3},
     {"h.{l}.attn.c_attn.weight", true, 2, 3}, {"h.{l}.attn.c_proj.weight", true, 0, 1},
     "wte.weight"},
    {"bert", "bert.", "encoder.layer.",
     {"encoder.layer.{l}.attention.self.query.weight", false, 0, 1},
     {"encoder.layer.{l}.attention.self.key.weight", false, 0, 1},
     {"encoder.layer.{l}.attention.self.value.weight", false, 0, 1},
     {"encoder.layer.{l}.attention.output.dense.weight", false, 0, 1},
     "embeddings.word_embeddings.weight"},
    {"albert", "albert.", nullptr,
     {"encoder.albert_layer_groups.0.albert_layers.0.attention.query.weight", false, 0, 1},
     {"encoder.albert_layer_groups.0.albert_layers.0.attention.key.weight", false, 0, 1},
     {"encoder.albert_layer_groups.0.albert_layers.0.attention.value.weight", false, 0, 1},
     {"encoder.albert_layer_groups.0.albert_layers.0.attention.dense.weight", false, 0, 1},
     "embeddings.word_embeddings.weight", "encoder.embedding_hidden_mapping_in.weight",
     "encoder.embedding_hidden_mapping_in.bias"},
    {"gpt-neo", "transformer.", "h.",
     {"h.{l}.attn.attention.q_proj.weight", false, 0, 1}, {"h.{l}.attn.attention.k_proj.weight", false, 0, 1},
     {"h.{l}.attn.attention.v_proj.weight", false, 0, 1}, {"h.{l}.attn.attention.out_proj.weight", false, 0, 1},
     "wte.weight", nullptr, nullptr, false},
};

constexpr std::int64_t albert_default_layers = 12;  // ALBERT base..xxlarge apply their layer 12 times

const ModelLayout& layout_of(const std::string& model) {
  for (const auto& l : layouts)
    if (model == l.model) return l;
  throw InputError("no safetensors layout for model '" + model + "'");
}

std::string layer_name(const char* pattern, std::int64_t l) {
  std::string s = pattern;
  const auto at = s.find("{l}");
  if (at != std::string::npos) s.replace(at, 3, std::to_string(l));
  return s;
}

class ModelWeights final : public WeightSource {
 public:
  explicit ModelWeights(const ModelWeightsOptions& o);

  int d() const override { return d_; }
  int heads() const override { return heads_; }
  int head_dim() const override { return d_ / heads_; }
  std::int64_t layers() const override { return layers_; }
  bool shared() const override { return layout_.layer_stem == nullptr; }
  double score_scale() const override { return layout_.scaled_scores ? 1.0 / std::sqrt(double(head_dim())) : 1.0; }
  LayerWeights layer(std::int64_t t) const override;
  std::vector<double> output_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override {
    return rows(layout_.output, t, begin, end);
  }
  std::vector<double> value_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override {
    return rows(layout_.value, t, begin, end);
  }
  bool has_embedding() const override { return vocab_ > 0; }
  std::vector<double> embedding(const std::vector<std::int64_t>& ids) const override;
  std::int64_t vocab_size() const override { return vocab_; }
  std::string describe() const override;

 private:
  std::string name(const char* pattern, std::int64_t stored_layer) const {
    return prefix_ + layer_name(pattern, stored_layer);
  }
  // [R, C] of a matrix in tokdyn's orientation: Q, K, V [D, d], O [d, D]; D = d in all four models.
  std::pair<std::int64_t, std::int64_t> spec_shape(const MatrixPlace&) const { return {d_, d_}; }
  std::vector<std::int64_t> stored_shape(const MatrixPlace& m) const {
    const auto [r, c] = spec_shape(m);
    return m.stored_in_out ? std::vector<std::int64_t>{c, m.blocks * r} : std::vector<std::int64_t>{m.blocks * r, c};
  }
  void check_tensor(const std::string& tensor, const std::vector<std::int64_t>& expected) const;
  // InputError naming the tensor when values [rows, cols], its rows row0.. and columns col0.., hold NaN or Inf.
  void require_finite(const std::string& tensor, const std::vector<double>& values, std::int64_t cols,
                      std::int64_t row0, std::int64_t col0) const;
  // Rows [begin, end) of matrix m of layer t in tokdyn's orientation: [end - begin, C].
  std::vector<double> rows(const MatrixPlace& m, std::int64_t t, std::int64_t begin, std::int64_t end) const;

  const ModelLayout& layout_;
  SafetensorsFile file_;
  std::string prefix_;
  int d_ = 0, heads_ = 0;
  std::int64_t file_layers_ = 1, layers_ = 0;
  std::int64_t vocab_ = 0, embedding_width_ = 0;  // embedding_width_: E (ALBERT) or d
};

ModelWeights::ModelWeights(const ModelWeightsOptions& o)
    : layout_(layout_of(o.model)), file_(SafetensorsFile::open(o.path)) {
  const std::string where = "safetensors '" + o.path + "'";
  // Prefix: the deck's, or (auto) none unless only the model's usual prefix finds layer 0's value tensor.
  const std::string probe = layer_name(layout_.value.tensor, 0);
  if (o.prefix == "auto") {
    if (!file_.has(probe) && file_.has(layout_.usual_prefix + probe)) prefix_ = layout_.usual_prefix;
    if (!file_.has(prefix_ + probe))
      throw InputError(where + ": no tensor '" + probe + "' nor '" + layout_.usual_prefix + probe + "': not a " +
                       layout_.model + " file, or set weights.prefix");
  } else {
    prefix_ = o.prefix;
    if (!file_.has(prefix_ + probe))
      throw InputError(where + ": no tensor '" + prefix_ + probe + "' (weights.prefix = '" + o.prefix + "'; not a " +
                       layout_.model + " file?)");
  }

  // Layer count: every index l with a name "prefix stem l." present; 0..max must all be complete.
  if (layout_.layer_stem) {
    const std::string stem = prefix_ + layout_.layer_stem;
    std::int64_t max_index = -1;
    for (const auto& n : file_.names()) {
      if (n.compare(0, stem.size(), stem) != 0) continue;
      std::size_t i = stem.size();
      std::int64_t index = 0;
      while (i < n.size() && n[i] >= '0' && n[i] <= '9' && index < (std::int64_t(1) << 40))
        index = index * 10 + (n[i++] - '0');
      if (i > stem.size() && i < n.size() && n[i] == '.') max_index = std::max(max_index, index);
    }
    file_layers_ = max_index + 1;
    for (std::int64_t l = 0; l < file_layers_; ++l)
      for (const MatrixPlace* m : {&layout_.query, &layout_.key, &layout_.value, &layout_.output})
        if (!file_.has(name(m->tensor, l)))
          throw InputError(where + ": tensor '" + name(m->tensor, l) + "' is missing (the file has tensors of layers up to " +
                           std::to_string(max_index) + ")");
  }

  // d from layer 0's value tensor: its input dimension.
  const std::string value0 = name(layout_.value.tensor, 0);
  const TensorInfo& v0 = file_.info(value0);
  if (v0.shape.size() != 2)
    throw InputError(where + ": tensor '" + value0 + "' has shape " + shape_text(v0.shape) + ", expected a matrix");
  const std::int64_t width = layout_.value.stored_in_out ? v0.shape[0] : v0.shape[1];
  if (width < 1 || width > (1 << 24))
    throw InputError(where + ": tensor '" + value0 + "' has shape " + shape_text(v0.shape) + ": model width " +
                     std::to_string(width) + " out of range [1, 2^24]");
  d_ = static_cast<int>(width);
  for (std::int64_t l = 0; l < file_layers_; ++l)
    for (const MatrixPlace* m : {&layout_.query, &layout_.key, &layout_.value, &layout_.output})
      check_tensor(name(m->tensor, l), stored_shape(*m));

  if (o.heads <= 0)
    throw InputError("weights.heads = " + std::to_string(o.heads) + ": safetensors files do not store the number of heads; "
                     "set weights.heads (" + where + ", d = " + std::to_string(d_) + ")");
  if (d_ % o.heads != 0)
    throw InputError("weights.heads = " + std::to_string(o.heads) + " does not divide the model width d = " +
                     std::to_string(d_) + " of " + where);
  heads_ = o.heads;

  if (o.layers < 0) throw InputError("weights.layers = " + std::to_string(o.layers) + " is negative");
  if (shared()) {
    layers_ = o.layers ? o.layers : albert_default_layers;
  } else {
    if (o.layers > file_layers_)
      throw InputError("weights.layers = " + std::to_string(o.layers) + " but " + where + " has " +
                       std::to_string(file_layers_) + " " + layout_.model + " layers");
    layers_ = o.layers ? o.layers : file_layers_;
  }

  // Embedding (optional): [vocab, d], or ALBERT's [vocab, E] with the mapping [d, E] and bias [d].
  const std::string emb = prefix_ + layout_.embedding;
  const bool mapped = layout_.mapping != nullptr;
  if (file_.has(emb) && (!mapped || (file_.has(prefix_ + layout_.mapping) && file_.has(prefix_ + layout_.mapping_bias)))) {
    const TensorInfo& e = file_.info(emb);
    if (e.shape.size() != 2 || e.shape[0] < 1 || (!mapped && e.shape[1] != d_))
      throw InputError(where + ": tensor '" + emb + "' has shape " + shape_text(e.shape) + ", expected [vocab, " +
                       (mapped ? std::string("E") : std::to_string(d_)) + "]");
    check_tensor(emb, e.shape);  // dtype
    embedding_width_ = e.shape[1];
    if (mapped) {
      check_tensor(prefix_ + layout_.mapping, {d_, embedding_width_});
      check_tensor(prefix_ + layout_.mapping_bias, {d_});
    }
    vocab_ = e.shape[0];
  }
}

void ModelWeights::check_tensor(const std::string& tensor, const std::vector<std::int64_t>& expected) const {
  const TensorInfo& t = file_.info(tensor);
  if (t.shape != expected)
    throw InputError("safetensors '" + file_.path() + "': tensor '" + tensor + "' has shape " + shape_text(t.shape) +
                     ", expected " + shape_text(expected) + " (" + layout_.model + ", d = " + std::to_string(d_) + ")");
  if (t.dtype != "F64" && t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16")
    throw InputError("safetensors '" + file_.path() + "': tensor '" + tensor + "' has dtype " + t.dtype +
                     ", expected F64, F32, F16 or BF16");
}

void ModelWeights::require_finite(const std::string& tensor, const std::vector<double>& values, std::int64_t cols,
                                  std::int64_t row0, std::int64_t col0) const {
  const std::int64_t bad = first_nonfinite(values);
  if (bad < 0) return;
  throw InputError("safetensors '" + file_.path() + "': tensor '" + tensor + "' holds NaN or Inf (first at row " +
                   std::to_string(row0 + bad / cols) + ", column " + std::to_string(col0 + bad % cols) + ")");
}

std::vector<double> ModelWeights::rows(const MatrixPlace& m, std::int64_t t, std::int64_t begin,
                                       std::int64_t end) const {
  const auto [r, c] = spec_shape(m);
  if (t < 0 || t >= layers_ || begin < 0 || begin > end || end > r)
    throw std::out_of_range("model weights: layer " + std::to_string(t) + " rows [" + std::to_string(begin) + ", " +
                            std::to_string(end) + ") outside " + std::to_string(layers_) + " layers of " +
                            std::to_string(r) + " rows");
  const std::string tensor = name(m.tensor, shared() ? 0 : t);
  const std::int64_t first = m.block * r;
  if (!m.stored_in_out) {
    std::vector<double> out = file_.read_rows(tensor, first + begin, first + end);  // [end - begin, C]
    require_finite(tensor, out, c, first + begin, 0);
    return out;
  }
  // [in, out] storage: the rows of M are columns of the tensor; read them in one pass over its C rows.
  const std::vector<double> block = file_.read_block(tensor, 0, c, first + begin, first + end);  // [C, n]
  require_finite(tensor, block, end - begin, 0, first + begin);
  const std::int64_t n = end - begin;
  std::vector<double> out(static_cast<std::size_t>(n * c));
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t j = 0; j < n; ++j) out[j * c + i] = block[i * n + j];
  return out;
}

LayerWeights ModelWeights::layer(std::int64_t t) const {
  LayerWeights w;
  w.d = d_;
  w.heads = heads_;
  w.head_dim = head_dim();
  w.score_scale = score_scale();
  w.query = rows(layout_.query, t, 0, d_);
  w.key = rows(layout_.key, t, 0, d_);
  w.value = rows(layout_.value, t, 0, d_);
  w.output = rows(layout_.output, t, 0, d_);
  return w;
}

std::vector<double> ModelWeights::embedding(const std::vector<std::int64_t>& ids) const {
  const std::string emb = prefix_ + layout_.embedding;
  if (!vocab_)
    throw InputError("safetensors '" + file_.path() + "' has no embedding (tensor '" + emb + "'" +
                     (layout_.mapping ? std::string(" with '") + prefix_ + layout_.mapping + "' and its bias" : "") + ")");
  const std::int64_t n = static_cast<std::int64_t>(ids.size()), e = embedding_width_;
  std::vector<double> rows_e(static_cast<std::size_t>(n * e));  // [n, E]
  for (std::int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_)
      throw InputError("safetensors '" + file_.path() + "': token id " + std::to_string(ids[i]) +
                       " outside the embedding '" + emb + "' of " + std::to_string(vocab_) + " rows");
    const std::vector<double> row = file_.read_rows(emb, ids[i], ids[i] + 1);
    require_finite(emb, row, e, ids[i], 0);
    std::copy(row.begin(), row.end(), rows_e.begin() + i * e);
  }
  if (!layout_.mapping) return rows_e;
  // ALBERT: x = W e + b with W [d, E], b [d]: X [n, d] = E_ids [n, E] W^T + 1 b^T.
  const std::vector<double> w = file_.read(prefix_ + layout_.mapping);
  const std::vector<double> b = file_.read(prefix_ + layout_.mapping_bias);
  require_finite(prefix_ + layout_.mapping, w, e, 0, 0);
  require_finite(prefix_ + layout_.mapping_bias, b, d_, 0, 0);  // [d], reported as row 0
  std::vector<double> x(static_cast<std::size_t>(n * d_));
  for (std::int64_t i = 0; i < n; ++i)
    for (int a = 0; a < d_; ++a) x[i * d_ + a] = b[a];
  if (n > 0) gemm_nt(static_cast<int>(n), d_, static_cast<int>(e), 1.0, rows_e.data(), static_cast<int>(e), w.data(),
                     static_cast<int>(e), 1.0, x.data(), d_);
  return x;
}

std::string ModelWeights::describe() const {
  const std::string value0 = name(layout_.value.tensor, 0);
  return std::string(layout_.model) + " safetensors '" + file_.path() + "'" +
         (prefix_.empty() ? "" : " (prefix '" + prefix_ + "')") + ": d = " + std::to_string(d_) +
         ", H = " + std::to_string(heads_) + ", " + std::to_string(layers_) + " layers" +
         (shared() ? " (one shared)" : "") + ", " + file_.info(value0).dtype;
}

}  // namespace

bool is_safetensors_model(const std::string& model) {
  for (const auto& l : layouts)
    if (model == l.model) return true;
  return false;
}

std::unique_ptr<WeightSource> open_model_weights(const ModelWeightsOptions& options) {
  return std::make_unique<ModelWeights>(options);
}

}  // namespace tokdyn
