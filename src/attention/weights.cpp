// Q, K, V from the deck: identity times a scale, Gaussian with a scale, or datasets of an HDF5 file;
// attention.beta up to the largest beta the interaction energy allows.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/deck.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/random.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/pairs/energy.hpp"

namespace tokdyn {
namespace {

struct MatrixKeys {
  const char* name;  // Q, K or V: also the dataset name in the weights file
  const char* key;   // deck key prefix
  Purpose purpose;
};
constexpr MatrixKeys kMatrices[] = {{"Q", "attention.query", Purpose::attention_q},
                                    {"K", "attention.key", Purpose::attention_k},
                                    {"V", "attention.value", Purpose::attention_v}};

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

void add_attention_keys(DeckSchema& s) {
  s.add_bool("attention.enabled", true, "apply the attention sub-step");
  std::string styles;
  for (const std::string& name : attention_styles().names())
    styles += (styles.empty() ? "" : "; ") + name + " = " + attention_styles().help(name);
  s.add_choice("attention.style", "softmax", attention_styles().names(), "attention kernel: " + styles);
  s.add_real("attention.factor", 1.0, "attention factor a multiplying the step (+1 attractive, -1 repulsive, 0 off)");
  s.add_real("attention.beta", 1.0, "inverse temperature beta in exp(beta <Qx, Ky>); also the beta of E_beta", 0.0,
             max_energy_beta())
      .range_reason = "the interaction energy E_beta reaches e^beta, which overflows a double above log(DBL_MAX)";
  for (const auto& m : kMatrices) {
    const std::string k = m.key;
    s.add_choice(k, "identity", {"identity", "gaussian", "file"},
                 std::string(m.name) + ": scale * I, Gaussian entries N(0, scale^2/d), or dataset '" + m.name +
                     "' of attention.weights_file");
    s.add_real(k + "_scale", 1.0, std::string("scale of ") + m.name);
  }
  s.add_file("attention.weights_file", "", "HDF5 file with datasets Q, K, V of shape [d, d] (for type file)");
  s.add_int("attention.seed", 7, "seed of the Gaussian Q, K, V", 0);
}

AttentionWeights attention_weights_from_deck(const Deck& deck, int d, MPI_Comm comm) {
  AttentionWeights w;
  w.d = d;
  w.beta = deck.get_real("attention.beta");
  std::vector<double>* targets[] = {&w.query, &w.key, &w.value};
  const std::uint64_t seed = static_cast<std::uint64_t>(deck.get_int("attention.seed"));
  for (int t = 0; t < 3; ++t) {
    const std::string k = kMatrices[t].key;
    const std::string type = deck.get_text(k);
    const double scale = deck.get_real(k + "_scale");
    std::vector<double>& m = *targets[t];
    m.assign(static_cast<std::size_t>(d) * d, 0.0);
    if (type == "identity") {
      for (int a = 0; a < d; ++a) m[a * d + a] = scale;
    } else if (type == "gaussian") {
      const RandomStream stream(seed, kMatrices[t].purpose);
      for (int a = 0; a < d; ++a) stream.normals(0, a, m.data() + a * d, d);  // row a from index a
      const double s = scale / std::sqrt(static_cast<double>(d));
      for (double& v : m) v *= s;
    } else {
      const std::string path = deck.get_text("attention.weights_file");
      if (path.empty()) throw InputError("deck key '" + k + "' = 'file' needs attention.weights_file");
      m = read_matrix(path, kMatrices[t].name, d, comm);
      for (double& v : m) v *= scale;
    }
  }
  return w;
}

std::unique_ptr<Attention> attention_from_deck(const Deck& deck, MPI_Comm comm, const Partition& partition, int d,
                                               int tile, const std::string& style) {
  if (!deck.get_bool("attention.enabled") || deck.get_real("attention.factor") == 0) return nullptr;
  AttentionContext context;
  context.comm = comm;
  context.partition = partition;
  context.weights = attention_weights_from_deck(deck, d, comm);
  context.tile = tile;
  return attention_styles().make(style.empty() ? deck.get_text("attention.style") : style, context);
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
