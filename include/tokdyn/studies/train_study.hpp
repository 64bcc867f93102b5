// tokdyn train: a small GPT trained on a character-level text or Markov sequences by ECD, ECDSep, SGDM
// or AdamW, with optional symmetry-breaking biases (doc/science.md section 10): every `eval_every` steps a
// record of the training and validation losses (raw and EMA), the gradient norm, the optimizer's
// momentum and energy and the Noether charges of every head; at the end the key-bias alignment.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokdyn/markov/sequences.hpp"
#include "tokdyn/studies/study.hpp"
#include "tokdyn/train/batches.hpp"
#include "tokdyn/train/gpt.hpp"
#include "tokdyn/train/optimizer.hpp"
#include "tokdyn/train/symmetry_biases.hpp"

namespace tokdyn {

struct TrainParams {
  std::string data = "text";  // text | markov
  std::string text_file, tokenizer = "chars";  // chars | bytes | words
  std::int64_t vocabulary_max = 0;              // words: the vocabulary's size with <unk> (0: every word)
  double validation = 0.1;
  MarkovChain chain;
  std::int64_t markov_tokens = 200000;
  GptConfig model;
  GptInit init;
  std::shared_ptr<const OptimizerSetup> optimizer;  // train.optimizer with its own section's keys read
  OptimizerContext optimizer_context;              // the seed and the GPT's tensors
  SymmetryBiasLaws biases;
  bool fixed_biases = false;  // bias.sampling = mean: b = mu at every pass
  bool eval_last = false;     // evaluate with the last sampled biases instead of the means
  std::vector<double> alignment_direction;  // mean b_Q (empty or zero: no alignment)
  int alignment_null = 1000, alignment_top = 8;
  std::int64_t parameters_every = 0;   // train/parameters at every k-th record and the last (0: none)
  bool alignment_layer_inputs = true;  // e_t as each layer reads it (else the raw embeddings)
  std::int64_t steps = 1000, batch = 8, eval_every = 50, eval_sequences = 32;
  double ema = 0.1;
  bool single = true;  // float parameters (else double)
  std::uint64_t seed = 1;
  std::string export_file;  // train.export: OUTPUT.safetensors, written at the end ("": none)
  std::string init_file;    // model.init_file: initial parameters ("": GPT-2's random start)
  std::int64_t records() const { return steps / eval_every; }
};
TrainParams train_params(const Deck& deck);

class TrainStudy : public Study {
 public:
  static DeckSchema schema();
  TrainStudy(const Comm& comm, const Deck& deck);
  ~TrainStudy() override;
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return params_.model.channels; }

 private:
  const Comm& comm_;
  TrainParams params_;
  TokenizedText text_;
  TextSplit split_;
  std::unique_ptr<RunState> state_;
};

}  // namespace tokdyn
