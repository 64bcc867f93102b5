// The HDF5 weights layout (hdf5_weights.hpp): a WeightSource that reads hyperslabs on one rank, and
// the collective writer every conversion goes through.
#include "tokdyn/weights/hdf5_weights.hpp"

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/io/checkpoint.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/safetensors.hpp"

namespace tokdyn {
namespace {

// What a weight file holds (io/outputs.hpp): the datasets are described from these declarations.
constexpr OutputDecl kWeightFileOutputs[] = {
    {"weights/embedding", OutputType::real, "1", "token, coordinate",
     "Token embedding [vocab, d] of the source model, row t the embedding of token id t (ALBERT: mapped to width d by its embedding_hidden_mapping_in); only when the source has one."},
    {"weights/key", OutputType::real, "1", "layer, head_feature, coordinate",
     "Key weights K [D, d] of each stored layer (one layer for shared weights), head h in rows [h d_h, (h+1) d_h)."},
    {"weights/output", OutputType::real, "1", "layer, coordinate, head_feature",
     "Output weights O [d, D] of each stored layer (one layer for shared weights), head h in columns [h d_h, (h+1) d_h); the layer matrix is F = O V."},
    {"weights/query", OutputType::real, "1", "layer, head_feature, coordinate",
     "Query weights Q [D, d] of each stored layer (one layer for shared weights), the heads stacked by rows: head h holds rows [h d_h, (h+1) d_h)."},
    {"weights/value", OutputType::real, "1", "layer, head_feature, coordinate",
     "Value weights V [D, d] of each stored layer (one layer for shared weights), head h in rows [h d_h, (h+1) d_h)."},
    {"weights@d", OutputType::integer, "1", "", "Model width d (the token dimension)."},
    {"weights@heads", OutputType::integer, "1", "", "Attention heads H of each layer."},
    {"weights@head_dim", OutputType::integer, "1", "", "Width d_h of each head; the stacked head width is D = H d_h."},
    {"weights@layers", OutputType::integer, "layers", "", "Layers stored (1 for shared weights)."},
    {"weights@shared", OutputType::integer, "1", "", "1 when one layer's weights serve every layer, else 0."},
    {"weights@score_scale", OutputType::real, "1", "",
     "Factor of the attention logits <Q_h x, K_h y> of the source model: 1/sqrt(d_h) (GPT-2, BERT, ALBERT), 1 (GPT-Neo)."},
    {"weights@source", OutputType::text, "", "", "What the weights were converted from (file, format, model)."},
};
const DeclaredOutputs kWeightFileDeclared("weights (tokdyn weights)", kWeightFileOutputs);


// An HDF5 shape as text, "[3, 4]" (safetensors' shape_text).
std::string dims_text(const std::vector<hsize_t>& shape) {
  return shape_text(std::vector<std::int64_t>(shape.begin(), shape.end()));
}

class Hdf5Weights final : public WeightSource {
 public:
  Hdf5Weights(const std::string& path, int heads, std::int64_t layers);

  int d() const override { return d_; }
  int heads() const override { return heads_; }
  int head_dim() const override { return head_dim_; }
  std::int64_t layers() const override { return layers_; }
  bool shared() const override { return shared_; }
  double score_scale() const override { return score_scale_; }
  LayerWeights layer(std::int64_t t) const override;
  std::vector<double> output_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override {
    return rows(output_, "output", t, begin, end, d_, width());
  }
  std::vector<double> value_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const override {
    return rows(value_, "value", t, begin, end, width(), d_);
  }
  bool has_embedding() const override { return vocab_ > 0; }
  std::vector<double> embedding(const std::vector<std::int64_t>& ids) const override;
  std::int64_t vocab_size() const override { return vocab_; }
  std::string describe() const override;

 private:
  int width() const { return heads_ * head_dim_; }
  std::int64_t attribute(const char* name, std::int64_t min, std::int64_t max) const;
  h5::Handle dataset(const char* name, const std::vector<hsize_t>& expected, const char* meaning) const;
  // Rows [begin, end) of layer t of /weights/name [Ls, rows, cols] -> [end - begin, cols]; InputError naming the
  // dataset and the entry when they hold NaN or Inf.
  std::vector<double> rows(hid_t dataset, const char* name, std::int64_t t, std::int64_t begin, std::int64_t end,
                           std::int64_t total, std::int64_t cols) const;

  std::string path_, where_, source_;
  h5::Handle file_, group_, query_, key_, value_, output_, embedding_;
  int d_ = 0, heads_ = 0, head_dim_ = 0;
  bool shared_ = false;
  std::int64_t stored_layers_ = 0, layers_ = 0, vocab_ = 0;
  double score_scale_ = 1;
};

Hdf5Weights::Hdf5Weights(const std::string& path, int heads, std::int64_t layers)
    : path_(path), where_("weights file '" + path + "'") {
  // The calling rank alone, read-only (default sec2 driver): ranks read independently.
  file_ = h5::open_input_file_here(path, "weights file");
  if (!h5::exists(file_, "weights")) throw InputError(where_ + " has no group /weights");
  group_ = h5::open_input_group(file_, "weights", "weights file", path);
  d_ = static_cast<int>(attribute("d", 1, 1 << 24));
  heads_ = static_cast<int>(attribute("heads", 1, 1 << 24));
  head_dim_ = static_cast<int>(attribute("head_dim", 1, 1 << 24));
  stored_layers_ = attribute("layers", 1, std::int64_t(1) << 40);
  shared_ = attribute("shared", 0, 1) == 1;
  if (!h5::has_attribute(group_, "score_scale")) throw InputError(where_ + ": /weights has no attribute 'score_scale'");
  {
    h5::Handle attr = h5::make_attr_handle(TOKDYN_H5(H5Aopen(group_, "score_scale", H5P_DEFAULT)));
    h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Aget_type(attr)));
    if (TOKDYN_H5(H5Tget_class(type)) != H5T_FLOAT)
      throw InputError(where_ + ": attribute /weights/score_scale is not floating point");
  }
  score_scale_ = h5::read_double_attribute(group_, "score_scale");
  if (!std::isfinite(score_scale_) || score_scale_ <= 0)
    throw InputError(where_ + ": attribute /weights/score_scale = " + std::to_string(score_scale_) +
                     " is not a positive number");
  source_ = h5::has_attribute(group_, "source") ? h5::read_string_attribute(group_, "source") : "";
  if (static_cast<std::int64_t>(heads_) * head_dim_ > (1 << 24))
    throw InputError(where_ + ": heads * head_dim = " + std::to_string(std::int64_t(heads_) * head_dim_) + " too large");

  const hsize_t ls = shared_ ? 1 : static_cast<hsize_t>(stored_layers_), dd = d_, ww = width();
  query_ = dataset("query", {ls, ww, dd}, "(layers, heads * head_dim, d)");
  key_ = dataset("key", {ls, ww, dd}, "(layers, heads * head_dim, d)");
  value_ = dataset("value", {ls, ww, dd}, "(layers, heads * head_dim, d)");
  output_ = dataset("output", {ls, dd, ww}, "(layers, d, heads * head_dim)");
  if (h5::exists(group_, "embedding")) {
    h5::Handle e = h5::open_input_dataset(group_, "embedding", "weights file", path_);
    const auto shape = h5::dims(e);
    if (shape.size() != 2 || shape[0] < 1 || shape[1] != dd)
      throw InputError(where_ + ": dataset /weights/embedding has shape " + dims_text(shape) + ", expected [vocab, " +
                       std::to_string(d_) + "]");
    embedding_ = dataset("embedding", shape, "");
    vocab_ = static_cast<std::int64_t>(shape[0]);
  }

  if (heads != 0 && heads != heads_)
    throw InputError("weights.heads = " + std::to_string(heads) + " but " + where_ + " stores heads = " +
                     std::to_string(heads_) + " (0: the file's)");
  if (layers < 0) throw InputError("weights.layers = " + std::to_string(layers) + " is negative");
  if (!shared_ && layers > stored_layers_)
    throw InputError("weights.layers = " + std::to_string(layers) + " but " + where_ + " has " +
                     std::to_string(stored_layers_) + " layers");
  layers_ = layers ? layers : stored_layers_;
}

std::int64_t Hdf5Weights::attribute(const char* name, std::int64_t min, std::int64_t max) const {
  if (!h5::has_attribute(group_, name)) throw InputError(where_ + ": /weights has no attribute '" + name + "'");
  h5::Handle attr = h5::make_attr_handle(TOKDYN_H5(H5Aopen(group_, name, H5P_DEFAULT)));
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Aget_type(attr)));
  if (TOKDYN_H5(H5Tget_class(type)) != H5T_INTEGER)
    throw InputError(where_ + ": attribute /weights/" + name + " is not an integer");
  const std::int64_t v = h5::read_int_attribute(group_, name);
  if (v < min || v > max)
    throw InputError(where_ + ": attribute /weights/" + name + " = " + std::to_string(v) + " out of range [" +
                     std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

h5::Handle Hdf5Weights::dataset(const char* name, const std::vector<hsize_t>& expected, const char* meaning) const {
  if (!h5::exists(group_, name)) throw InputError(where_ + " has no dataset /weights/" + name);
  h5::Handle ds = h5::open_input_dataset(group_, name, "weights file", path_);
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Dget_type(ds)));
  if (TOKDYN_H5(H5Tget_class(type)) != H5T_FLOAT)
    throw InputError(where_ + ": dataset /weights/" + name + " is not floating point");
  const auto shape = h5::dims(ds);
  if (shape != expected)
    throw InputError(where_ + ": dataset /weights/" + name + " has shape " + dims_text(shape) + ", expected " +
                     dims_text(expected) + " " + meaning + " from its attributes");
  return ds;
}

std::vector<double> Hdf5Weights::rows(hid_t dataset, const char* name, std::int64_t t, std::int64_t begin,
                                      std::int64_t end, std::int64_t total, std::int64_t cols) const {
  if (t < 0 || t >= layers_ || begin < 0 || begin > end || end > total)
    throw std::out_of_range(where_ + ": layer " + std::to_string(t) + " rows [" + std::to_string(begin) + ", " +
                            std::to_string(end) + ") outside " + std::to_string(layers_) + " layers of " +
                            std::to_string(total) + " rows");
  std::vector<double> out(static_cast<std::size_t>((end - begin) * cols));
  if (out.empty()) return out;
  // Rows [begin, end) of layer t (the file's only layer when shared), read by this rank alone.
  const std::int64_t stored = shared_ ? 0 : t;
  h5::read_series_slab(dataset, static_cast<hsize_t>(stored), H5T_NATIVE_DOUBLE, out.data(),
                       static_cast<hsize_t>(begin), static_cast<hsize_t>(end - begin), false);
  const std::int64_t bad = first_nonfinite(out);
  if (bad >= 0)
    throw InputError(where_ + ": dataset /weights/" + name + " holds NaN or Inf (first at layer " +
                     std::to_string(stored) + ", row " + std::to_string(begin + bad / cols) + ", column " +
                     std::to_string(bad % cols) + ")");
  return out;
}

LayerWeights Hdf5Weights::layer(std::int64_t t) const {
  LayerWeights w;
  w.d = d_;
  w.heads = heads_;
  w.head_dim = head_dim_;
  w.score_scale = score_scale_;
  w.query = rows(query_, "query", t, 0, width(), width(), d_);
  w.key = rows(key_, "key", t, 0, width(), width(), d_);
  w.value = rows(value_, "value", t, 0, width(), width(), d_);
  w.output = rows(output_, "output", t, 0, d_, d_, width());
  return w;
}

std::vector<double> Hdf5Weights::embedding(const std::vector<std::int64_t>& ids) const {
  if (!vocab_) throw InputError(where_ + " has no dataset /weights/embedding");
  std::vector<double> x(ids.size() * static_cast<std::size_t>(d_));
  h5::Handle file_space = h5::make_space_handle(TOKDYN_H5(H5Dget_space(embedding_)));
  const hsize_t row[2] = {1, static_cast<hsize_t>(d_)};
  h5::Handle mem_space = h5::make_space_handle(TOKDYN_H5(H5Screate_simple(2, row, nullptr)));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_)
      throw InputError(where_ + ": token id " + std::to_string(ids[i]) + " outside /weights/embedding of " +
                       std::to_string(vocab_) + " rows");
    const hsize_t start[2] = {static_cast<hsize_t>(ids[i]), 0};
    TOKDYN_H5(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, row, nullptr));
    TOKDYN_H5(H5Dread(embedding_, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, x.data() + i * d_));
    for (int a = 0; a < d_; ++a)
      if (!std::isfinite(x[i * d_ + a]))
        throw InputError(where_ + ": dataset /weights/embedding holds NaN or Inf (first at row " +
                         std::to_string(ids[i]) + ", column " + std::to_string(a) + ")");
  }
  return x;
}

std::string Hdf5Weights::describe() const {
  return "hdf5 '" + path_ + "': d = " + std::to_string(d_) + ", H = " + std::to_string(heads_) + ", " +
         std::to_string(layers_) + " layers" + (shared_ ? " (one shared)" : "") +
         (source_.empty() ? "" : ", from " + source_);
}

}  // namespace

std::unique_ptr<WeightSource> open_hdf5_weights(const std::string& path, int heads, std::int64_t layers) {
  return std::make_unique<Hdf5Weights>(path, heads, layers);
}

void write_hdf5_weights(const std::string& path, const WeightSource& source, MPI_Comm comm) {
  int rank = 0, size = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &size));
  const int d = source.d(), width = source.heads() * source.head_dim();
  const std::int64_t layers = source.layers(), stored = source.shared() ? 1 : layers;
  const std::string partial = path + ".part";
  try {
    h5::Handle file = h5::create_file(partial, comm);
    h5::Handle g = h5::create_group(file, "weights");
    h5::write_attribute(g, "d", std::int64_t(d));
    h5::write_attribute(g, "heads", std::int64_t(source.heads()));
    h5::write_attribute(g, "head_dim", std::int64_t(source.head_dim()));
    h5::write_attribute(g, "layers", layers);
    h5::write_attribute(g, "shared", std::int64_t(source.shared() ? 1 : 0));
    h5::write_attribute(g, "score_scale", source.score_scale());
    h5::write_attribute(g, "source", source.describe());
    const hsize_t ls = stored, dd = d, ww = width;
    h5::Handle q = h5::create_dataset(g, "query", H5T_IEEE_F64LE, {ls, ww, dd});
    h5::Handle k = h5::create_dataset(g, "key", H5T_IEEE_F64LE, {ls, ww, dd});
    h5::Handle v = h5::create_dataset(g, "value", H5T_IEEE_F64LE, {ls, ww, dd});
    h5::Handle o = h5::create_dataset(g, "output", H5T_IEEE_F64LE, {ls, dd, ww});
    // Round r: rank p writes layer r P + p (when there is one); every rank joins each collective write, and
    // agrees first on whether every rank could read its layer.
    static const double nothing = 0;
    for (std::int64_t first = 0; first < stored; first += size) {
      const std::int64_t t = first + rank;
      const bool mine = t < stored;
      const LayerWeights w = read_collectively(comm, [&] { return mine ? source.layer(t) : LayerWeights{}; });
      if (mine) {
        const std::size_t n = static_cast<std::size_t>(width) * d;
        if (w.query.size() != n || w.key.size() != n || w.value.size() != n || w.output.size() != n)
          throw SystemError("write_hdf5_weights: layer " + std::to_string(t) + " of " + source.describe() +
                            " has the wrong size");
      }
      const hsize_t at = mine ? static_cast<hsize_t>(t) : 0, count = mine ? 1 : 0;
      h5::write_slab(q, H5T_NATIVE_DOUBLE, mine ? w.query.data() : &nothing, at, count);
      h5::write_slab(k, H5T_NATIVE_DOUBLE, mine ? w.key.data() : &nothing, at, count);
      h5::write_slab(v, H5T_NATIVE_DOUBLE, mine ? w.value.data() : &nothing, at, count);
      h5::write_slab(o, H5T_NATIVE_DOUBLE, mine ? w.output.data() : &nothing, at, count);
    }
    if (source.has_embedding() && source.vocab_size() > 0) {
      const std::int64_t vocab = source.vocab_size();
      h5::Handle e = h5::create_dataset(g, "embedding", H5T_IEEE_F64LE, {static_cast<hsize_t>(vocab), dd});
      // This rank's rows of a block partition, in blocks of at most `block` rows per collective write.
      const Partition part(vocab, size);
      const std::int64_t block = 4096, mine = part.count(rank), begin = part.begin(rank);
      for (std::int64_t done = 0; done < part.max_count(); done += block) {
        const std::int64_t n = std::max<std::int64_t>(0, std::min(block, mine - done));
        std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) ids[i] = begin + done + i;
        const std::vector<double> x =
            read_collectively(comm, [&] { return n ? source.embedding(ids) : std::vector<double>{}; });
        h5::write_slab(e, H5T_NATIVE_DOUBLE, n ? x.data() : &nothing, n ? static_cast<hsize_t>(begin + done) : 0,
                       static_cast<hsize_t>(n));
      }
    }
    describe_datasets(file);  // weights/query, ... each with its description, units and axes
  } catch (const InputError&) {
    // Every rank is here (the reads agree collectively) and the file is closed: leave no partial output to be
    // mistaken for an interrupted conversion. Best effort: the input error is what gets reported.
    if (rank == 0) {
      std::error_code ec;
      std::filesystem::remove(partial, ec);
    }
    throw;
  }
  rename_collectively(partial, path, comm);
}

}  // namespace tokdyn
