// Self-attention Attn_X(x) of the tokens (doc/science.md section 1.1), as interchangeable styles chosen by name.
// Every style sees the same weights: logits beta <Q x, K y>, values V y.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/core/deck/key_table.hpp"
#include "tokdyn/core/deck/registry.hpp"

namespace tokdyn {

// Q_h, K_h, V_h of H heads stacked as [D, d] row-major matrices (D = H d_h; the transformer's attention is
// one head with D = d), and the score scale beta in front of <Q_h x, K_h y>.
struct AttentionWeights {
  int d = 0;
  int heads = 1;
  double beta = 1;
  std::vector<double> query, key, value;  // [D, d] each
  int width() const { return d > 0 ? static_cast<int>(query.size() / static_cast<std::size_t>(d)) : 0; }  // D
  int head_dim() const { return width() / heads; }
};

struct AttentionContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  Partition partition;  // of the N tokens
  AttentionWeights weights;
  int tile = 256;       // rows per BLAS tile
  bool causal = false;  // token i attends to tokens j <= i only (by global index; GPT-style)
  // Logits c <x_i, x_j> (Q and K multiples of I with c = beta q k >= 0, one head, not causal, uniform
  // masses) take the half ring: one exponential per unordered pair serves both rows. false: always the
  // general pass (tests compare the two).
  bool symmetric = true;
  // The approximate styles' accuracy knobs: the truncation tolerance of the series styles (harmonic:
  // the neglected tail relative to e^{|b|}) and the number of random features with their seed (features).
  double tolerance = 1e-12;
  int features = 1024;
  std::uint64_t seed = 7;
  // The exact ring styles' tile products in float32, exponentials and sums in float64 (attention.precision =
  // float32), in the general and the half ring. Its error bound: pairs/online_softmax.hpp.
  bool single_tiles = false;
};

class PairStatisticsPass;
struct PairStatistics;

class Attention {
 public:
  virtual ~Attention() = default;
  // out[i] = (sum_j A^h_ij V_h x_j)_h, heads side by side, for this rank's tokens; x [n_local, d],
  // out [n_local, D] (D = d for one square head: out[i] = Attn_X(x[i])). Collective.
  virtual void apply(const double* x, double* out) = 0;
  // Token masses w_j of this rank's tokens [n_local] (finite, >= 0, global sum 1; InputError otherwise),
  // used by every later apply: Attn(x) = sum_j w_j e^{s_j} V x_j / sum_j w_j e^{s_j} (SA) or
  // sum_j w_j e^{s_j} V x_j (USA). Until it is called the masses are uniform, w_j = 1/N. Collective.
  virtual void set_masses(const double* masses) = 0;
  // New weights of the same d, D and H for every later apply (a layer of a model file). InputError when a
  // style cannot take them.
  virtual void set_weights(const AttentionWeights& weights) = 0;
  // One pass for two results: out = Attn(x) as apply writes it and, when this style can form them in the
  // same pass (its tiles hold the cosines and E_beta's terms: logits beta <x_i, x_j> with the statistics' beta
  // and tile), the exact pair statistics of x into result: true. False: out = Attn(x) alone, result untouched
  // (the caller forms the statistics in their own pass). out is bit for bit apply's either way. Collective.
  virtual bool apply_with_statistics(const double* x, double* out, PairStatisticsPass& statistics,
                                     PairStatistics& result) {
    (void)statistics, (void)result;
    apply(x, out);
    return false;
  }
};

// What most styles keep: their context, this rank's tokens [begin, begin + n_local), and set_weights with
// the shape check (a style that derives quantities from the weights overrides it).
class AttentionStyle : public Attention {
 public:
  void set_weights(const AttentionWeights& weights) override;

 protected:
  AttentionStyle(const AttentionContext& context, std::string name);
  AttentionContext context_;
  std::string name_;
  int rank_ = 0;
  std::int64_t n_local_ = 0, begin_ = 0;
};

// What a style declares about its matrix A, so that callers never compare style names.
struct AttentionTraits {
  bool normalized = true;    // rows of A sum to 1 (SA-type); false: USA-type, (1/N) sum_j e^{s_ij} ...
  bool exponential = false;  // A_ij is proportional to w_j e^{beta <Q x_i, K x_j>} (SA, USA)
  bool ring = false;         // exact pass over all pairs: key blocks [N/P, 2d + 1] travel round the ranks
};

struct AttentionSpec;

class AttentionRegistry : public KeyedRegistry<Attention, AttentionSpec, const AttentionContext&> {
 public:
  using KeyedRegistry::KeyedRegistry;
  // keys: the [attention] keys the style reads beyond the common ones (its class's keys()), null when none.
  void add(const std::string& name, const std::string& help, const AttentionTraits& traits, Factory factory,
           const KeyTable<AttentionSpec>* keys = nullptr);
  const AttentionTraits& traits(const std::string& name) const;  // InputError for an unknown name

 private:
  std::map<std::string, AttentionTraits> traits_;
};
// Every attention style (src/attention/styles.cpp lists the built-in ones).
const AttentionRegistry& attention_styles();
// A style from outside the list (a plugin, a test-only style): call before the commands run, e.g. from a
// static initializer. SystemError for a name that is taken.
bool add_attention_style(const std::string& name, const std::string& help, const AttentionTraits& traits,
                         AttentionRegistry::Factory factory, const KeyTable<AttentionSpec>* keys = nullptr);

// Q, K, V as a deck describes them (studies/keys.hpp reads them): scale * I, Gaussian entries
// N(0, scale^2 / d) from the stream (seed, Q/K/V, row), or the dataset Q, K or V [d, d] of an HDF5 file
// times scale; beta in front of the logits.
inline constexpr const char* kAttentionMatrixKeys[3] = {"attention.query", "attention.key", "attention.value"};
struct AttentionWeightSpec {
  struct Matrix {
    std::string type = "identity";  // identity | gaussian | file
    double scale = 1;
  };
  Matrix matrices[3];  // Q, K, V
  std::string file;
  double beta = 1;
  std::uint64_t seed = 7;
  int heads = 1;  // H heads of d/H rows of Q, K, V each (attention.heads)
};
AttentionWeights make_attention_weights(const AttentionWeightSpec& spec, int d, MPI_Comm comm);
// Whether the exact ring styles may take the half ring for these weights (Q, K identities times scales with
// beta q k >= 0, or other matrices: beta Q^T K may be symmetric positive semi-definite). RingAttention decides
// on the matrices themselves; this is a deck's reading of it, for memory estimates.
bool half_ring_applies(const AttentionWeightSpec& spec);

// The attention sub-step: on when enabled with a non-zero factor a; style by name.
struct AttentionSpec {
  bool enabled = true;
  double factor = 1;
  std::string style = "softmax";
  AttentionWeightSpec weights;
  double tolerance = 1e-12;  // series styles' truncation (AttentionContext::tolerance)
  int features = 1024;       // random-feature styles' M (their seed is weights.seed)
  bool single_tiles = false;  // attention.precision = float32 (AttentionContext::single_tiles)
  bool causal = false;        // attention.causal (AttentionContext::causal)
  bool on() const { return enabled && factor != 0; }
  double step_factor() const { return enabled ? factor : 0.0; }
};
// The attention on comm over the given tokens; null when it is off (the sub-step is skipped).
// style: another registered style than spec.style.
std::unique_ptr<Attention> make_attention(const AttentionSpec& spec, MPI_Comm comm, const Partition& partition, int d,
                                          int tile, const std::string& style = "");
// Weights with Q = q I, K = k I, V = v I: logits b <x, y> with b = beta q k, values v y (what the closed-form
// kernels on the circle need). InputError naming attention.query/key/value and `who` otherwise (to 1e-14).
struct ScalarAttention {
  double b = 1, v = 1;
};
ScalarAttention scalar_attention(const AttentionWeights& weights, const std::string& who);
// The attention of a replica study, where one replica's N tokens live on one rank (MPI_COMM_SELF);
// null when factor is 0.
std::unique_ptr<Attention> replica_attention(const std::string& style, const AttentionWeights& weights,
                                             std::int64_t n, int tile, double factor);
// InputError unless next has the d, D and H that a style was set up with (every style's set_weights), and
// H divides D.
void check_same_shape(const AttentionWeights& set, const AttentionWeights& next, const std::string& style);
// Q = K = V = I: logits beta <x, y>, the case of the closed forms of doc/science.md sections 6.4 and 6.6.
AttentionWeights identity_attention_weights(int d, double beta);

}  // namespace tokdyn
