// The deck key groups that several studies share, each declared once (add_*_keys: name, default,
// range, help) and read once into the parameter struct its module takes (*_spec / *_params). This is
// the edge: below the study layer no code reads a deck.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/dynamics/token_run.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/weights/layer_weights.hpp"
#include "tokdyn/weights/synthetic_weights.hpp"
#include "tokdyn/weights/weight_formats.hpp"

namespace tokdyn {

// [model] N (when the study has tokens), d, L, T: one declaration (name, range) for every study, with
// the study's defaults and what L counts there.
struct ModelKeys {
  bool tokens = true;  // declare model.N
  std::int64_t n = 64;
  int d = 4;
  std::int64_t layers = 100;
  double horizon = 1;
  std::string d_help = "dimension d (tokens on S^{d-1})";
  std::string layers_help = "depth L: layers, or time steps of the SDE (step T/L)";
};
void add_model_keys(DeckSchema& schema, const ModelKeys& keys = {});
// [diagnostics] every, snapshot_every, bins.
void add_diagnostics_keys(DeckSchema& schema);
TokenCadence token_cadence_from_deck(const Deck& deck);
// diagnostics.pairs (auto resolved by model.N), diagnostics.sample_tokens, run.seed.
PairSampling pair_sampling_from_deck(const Deck& deck);
// [tokens] init, file, dataset (and run.seed for uniform tokens).
void add_token_keys(DeckSchema& schema);
TokenSource token_source_from_deck(const Deck& deck);

// [attention] enabled, style, factor, beta, query/key/value (+ _scale), weights_file, seed. attention.beta
// is also the beta of the interaction energy every command with these keys records, so it stops at
// max_energy_beta() (pairs/energy.hpp).
void add_attention_keys(DeckSchema& schema);
// [attention] heads and causal: the token models' (transformer, sde) multi-head and causal attention.
void add_attention_layout_keys(DeckSchema& schema);
AttentionSpec attention_spec_from_deck(const Deck& deck);
AttentionWeights attention_weights_from_deck(const Deck& deck, int d, MPI_Comm comm);
std::unique_ptr<Attention> attention_from_deck(const Deck& deck, MPI_Comm comm, const Partition& partition, int d,
                                               int tile, const std::string& style = "");

// [mlp] enabled, width and the kernel keys activation, sigma_u, sigma_w (run.seed seeds the weights).
void add_mlp_keys(DeckSchema& schema);
void add_kernel_keys(DeckSchema& schema);
MlpParams mlp_params_from_deck(const Deck& deck);
// [noise] field, kl_tolerance, features, with the kernel of the [mlp] keys in dimension d.
void add_field_keys(DeckSchema& schema);
FieldParams field_params_from_deck(const Deck& deck, int d);

// [weights] format, file, prefix, heads, layers and the [synthetic] keys.
void add_weight_keys(DeckSchema& schema);
void add_synthetic_keys(DeckSchema& schema);
SyntheticSpec synthetic_spec_from_deck(const Deck& deck);
WeightSpec weight_spec_from_deck(const Deck& deck);
std::unique_ptr<WeightSource> weights_from_deck(const Deck& deck, MPI_Comm comm);

// [meanfield] solver, cells, cfl, max_refinement, points, refinement, density, amplitude, concentration,
// with the model (d, L, T), attention, noise and run (seed, tile) keys a solver also takes.
void add_meanfield_keys(DeckSchema& schema);
MeanFieldSpec meanfield_spec_from_deck(const Deck& deck);

}  // namespace tokdyn
