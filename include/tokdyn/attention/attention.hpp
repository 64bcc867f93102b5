// Self-attention Attn_X(x) of the tokens (doc/science.md section 1.1), as interchangeable styles chosen by name.
// Every style sees the same weights: logits beta <Q x, K y>, values V y.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/core/partition.hpp"
#include "tokdyn/core/registry.hpp"

namespace tokdyn {

class Deck;
class DeckSchema;

// Q, K, V as d x d row-major matrices, and beta in front of <Qx, Ky>.
struct AttentionWeights {
  int d = 0;
  double beta = 1;
  std::vector<double> query, key, value;  // [d, d] each
};

struct AttentionContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  Partition partition;  // of the N tokens
  AttentionWeights weights;
  int tile = 256;  // rows per BLAS tile
};

class Attention {
 public:
  virtual ~Attention() = default;
  // out[i] = Attn_X(x[i]) for this rank's tokens; x, out: [n_local, d]. Collective.
  virtual void apply(const double* x, double* out) = 0;
  // Token masses w_j of this rank's tokens [n_local] (finite, >= 0, global sum 1; InputError otherwise),
  // used by every later apply: Attn(x) = sum_j w_j e^{s_j} V x_j / sum_j w_j e^{s_j} (SA) or
  // sum_j w_j e^{s_j} V x_j (USA). Until it is called the masses are uniform, w_j = 1/N. Collective.
  virtual void set_masses(const double* masses) = 0;
};

using AttentionRegistry = Registry<Attention, const AttentionContext&>;
// Every attention style, in one list (src/attention/styles.cpp).
const AttentionRegistry& attention_styles();

// Deck keys of the [attention] section, and the weights they describe (identity, gaussian, file).
// attention.beta is also the beta of the interaction energy every command with these keys records, so it
// stops at max_energy_beta().
void add_attention_keys(DeckSchema& schema);
// log(DBL_MAX) = 709.78: the interaction energy E_beta = (1/2N^2) sum_ij (e^beta - e^{beta <x_i, x_j>}) is up
// to e^beta (about e^beta / 2 for spread tokens), which overflows a double above it.
double max_energy_beta();
// E_beta from s = E_beta e^{-beta}, which the diagnostics sum instead (for unit tokens
// s = (1/2N^2) sum_ij -expm1(beta (<x_i, x_j> - 1)), in [0, 1]): sign(s) exp(beta + log |s|), 0 for s = 0.
// No e^beta-sized term is ever summed, so nothing overflows below max_energy_beta().
double energy_from_scaled(double beta, double s);
AttentionWeights attention_weights_from_deck(const Deck& deck, int d, MPI_Comm comm);
// The deck's attention on comm over the given tokens; null when attention.enabled is false or the
// attention factor is 0 (the sub-step is skipped). style: another registered style than attention.style.
std::unique_ptr<Attention> attention_from_deck(const Deck& deck, MPI_Comm comm, const Partition& partition, int d,
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
// Q = K = V = I: logits beta <x, y>, the case of the closed forms of doc/science.md sections 6.4 and 6.6.
AttentionWeights identity_attention_weights(int d, double beta);

}  // namespace tokdyn
