// Self-attention Attn_X(x) of the tokens (spec section 1), as interchangeable styles chosen by name.
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
};

using AttentionRegistry = Registry<Attention, const AttentionContext&>;
// Every attention style, in one list (src/attention/styles.cpp).
const AttentionRegistry& attention_styles();

// Deck keys of the [attention] section, and the weights they describe (identity, gaussian, file).
void add_attention_keys(DeckSchema& schema);
AttentionWeights attention_weights_from_deck(const Deck& deck, int d, MPI_Comm comm);
// The deck's attention on comm over the given tokens; null when attention.enabled is false or the
// attention factor is 0 (the sub-step is skipped).
std::unique_ptr<Attention> attention_from_deck(const Deck& deck, MPI_Comm comm, const Partition& partition, int d,
                                               int tile);
// The attention of a replica study, where one replica's N tokens live on one rank (MPI_COMM_SELF);
// null when factor is 0.
std::unique_ptr<Attention> replica_attention(const std::string& style, const AttentionWeights& weights,
                                             std::int64_t n, int tile, double factor);
// Q = K = V = I: logits beta <x, y>, the case of the spec's closed forms.
AttentionWeights identity_attention_weights(int d, double beta);

}  // namespace tokdyn
