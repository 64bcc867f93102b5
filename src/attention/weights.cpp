// Q, K, V from the deck: identity times a scale, Gaussian with a scale, or datasets of an HDF5 file;
// attention.beta up to the largest beta the interaction energy allows.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/io/hdf5.hpp"

namespace tokdyn {
namespace {

struct Matrix {
  const char* name;  // Q, K or V: also the dataset name in the weights file
  Purpose purpose;
};
constexpr Matrix kMatrices[] = {{"Q", Purpose::attention_q}, {"K", Purpose::attention_k}, {"V", Purpose::attention_v}};

std::vector<double> read_matrix(const std::string& path, const std::string& name, int d, MPI_Comm comm) {
  h5::Handle file = h5::open_input_file(path, comm, "attention weights file");
  h5::Handle data = h5::open_input_dataset(file, name, "attention weights file", path);
  const auto shape = h5::dims(data);
  if (shape.size() != 2 || shape[0] != hsize_t(d) || shape[1] != hsize_t(d)) {
    std::string got;
    for (auto s : shape) got += (got.empty() ? "" : ",") + std::to_string(s);
    throw InputError("attention weights file '" + path + "': dataset '" + name + "' has shape [" + got +
                     "], expected [" + std::to_string(d) + "," + std::to_string(d) + "]");
  }
  std::vector<double> m(static_cast<std::size_t>(d) * d);
  h5::read_slab(data, H5T_NATIVE_DOUBLE, m.data(), 0, d);  // every rank reads the whole matrix: all see the same
  for (std::size_t k = 0; k < m.size(); ++k)
    if (!std::isfinite(m[k]))
      throw InputError("attention weights file '" + path + "': dataset '" + name + "' holds NaN or Inf (first at row " +
                       std::to_string(k / d) + ", column " + std::to_string(k % d) + ")");
  return m;
}

// The multiple s of the identity that m [d, d] is, to 1e-14 (relative to max(1, |s|)); InputError otherwise.
double identity_multiple(const std::vector<double>& m, int d, const char* key, const std::string& who) {
  const double s = m[0];
  const double tolerance = 1e-14 * std::max(1.0, std::abs(s));
  for (int a = 0; a < d; ++a)
    for (int c = 0; c < d; ++c)
      if (!(std::abs(m[a * d + c] - (a == c ? s : 0.0)) <= tolerance))
        throw InputError(who + " needs " + key + " to be a multiple of the identity (entry " + std::to_string(a) +
                         "," + std::to_string(c) + " is " + std::to_string(m[a * d + c]) + ")");
  return s;
}

}  // namespace

ScalarAttention scalar_attention(const AttentionWeights& w, const std::string& who) {
  const double q = identity_multiple(w.query, w.d, "attention.query", who);
  const double k = identity_multiple(w.key, w.d, "attention.key", who);
  return {w.beta * q * k, identity_multiple(w.value, w.d, "attention.value", who)};
}

AttentionWeights make_attention_weights(const AttentionWeightSpec& spec, int d, MPI_Comm comm) {
  AttentionWeights w;
  w.d = d;
  w.beta = spec.beta;
  if (spec.heads < 1 || d % spec.heads != 0)
    throw InputError("deck key 'attention.heads' = '" + std::to_string(spec.heads) + "': does not divide model.d = " +
                     std::to_string(d));
  w.heads = spec.heads;
  std::vector<double>* targets[] = {&w.query, &w.key, &w.value};
  for (int t = 0; t < 3; ++t) {
    const AttentionWeightSpec::Matrix& spec_m = spec.matrices[t];
    std::vector<double>& m = *targets[t];
    m.assign(static_cast<std::size_t>(d) * d, 0.0);
    if (spec_m.type == "identity") {
      for (int a = 0; a < d; ++a) m[a * d + a] = spec_m.scale;
    } else if (spec_m.type == "gaussian") {
      const RandomStream stream(spec.seed, kMatrices[t].purpose);
      for (int a = 0; a < d; ++a) stream.normals(0, a, m.data() + a * d, d);  // row a from index a
      const double s = spec_m.scale / std::sqrt(static_cast<double>(d));
      for (double& v : m) v *= s;
    } else {
      if (spec.file.empty())
        throw InputError("deck key '" + std::string(kAttentionMatrixKeys[t]) + "' = 'file' needs attention.weights_file");
      m = read_matrix(spec.file, kMatrices[t].name, d, comm);
      for (double& v : m) v *= spec_m.scale;
    }
  }
  return w;
}

std::unique_ptr<Attention> make_attention(const AttentionSpec& spec, MPI_Comm comm, const Partition& partition, int d,
                                          int tile, const std::string& style) {
  if (!spec.on()) return nullptr;
  AttentionContext context;
  context.comm = comm;
  context.partition = partition;
  context.weights = make_attention_weights(spec.weights, d, comm);
  context.tile = tile;
  context.tolerance = spec.tolerance;
  context.features = spec.features;
  context.single_tiles = spec.single_tiles;
  context.causal = spec.causal;
  context.seed = spec.weights.seed;
  return attention_styles().make(style.empty() ? spec.style : style, context);
}

bool half_ring_applies(const AttentionWeightSpec& spec) {
  // Identities: exactly when beta q k >= 0. Gaussian or file matrices: when beta Q^T K turns out symmetric
  // positive semi-definite, which the deck alone does not say; an estimate counts them (the larger case).
  const auto& q = spec.matrices[0];
  const auto& k = spec.matrices[1];
  return q.type != "identity" || k.type != "identity" || spec.beta * q.scale * k.scale >= 0;
}

void check_same_shape(const AttentionWeights& set, const AttentionWeights& next, const std::string& style) {
  if (next.d == set.d && next.width() == set.width() && next.heads == set.heads && next.heads > 0 &&
      next.width() % next.heads == 0)
    return;
  throw InputError("attention style " + style + ": weights with d = " + std::to_string(next.d) + ", D = " +
                   std::to_string(next.width()) + ", " + std::to_string(next.heads) + " heads, for one set up for d = " +
                   std::to_string(set.d) + ", D = " + std::to_string(set.width()) + ", " + std::to_string(set.heads) +
                   " heads");
}

AttentionStyle::AttentionStyle(const AttentionContext& context, std::string name)
    : context_(context), name_(std::move(name)) {
  TOKDYN_MPI_CHECK(MPI_Comm_rank(context_.comm, &rank_));
  n_local_ = context_.partition.count(rank_);
  begin_ = context_.partition.begin(rank_);
  check_same_shape(context_.weights, context_.weights, name_);
}

void AttentionStyle::set_weights(const AttentionWeights& w) {
  check_same_shape(context_.weights, w, name_);
  if (&w != &context_.weights) context_.weights = w;
}

AttentionWeights identity_attention_weights(int d, double beta) {
  AttentionWeights w;
  w.d = d;
  w.beta = beta;
  w.query.assign(static_cast<std::size_t>(d) * d, 0.0);
  for (int a = 0; a < d; ++a) w.query[a * d + a] = 1;
  w.key = w.value = w.query;
  return w;
}

}  // namespace tokdyn
