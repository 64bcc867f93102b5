// tokdyn markov: the gradient flow of the one-layer transformer on Markov sequences or a text
// (doc/science.md section 8), recorded at R equally spaced times: loss, attention, alignments, singular
// values, conserved quantities, embeddings; the stage-I rate predicted from the data next to sigma_1.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokdyn/markov/gradient_flow.hpp"
#include "tokdyn/markov/stages.hpp"
#include "tokdyn/markov/observables.hpp"
#include "tokdyn/markov/one_layer.hpp"
#include "tokdyn/markov/sequences.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {

struct MarkovParams {
  std::string data = "chain";  // chain | text
  MarkovChain chain;
  std::int64_t s = 32;
  std::string loss = "population";  // population | sample
  std::int64_t samples = 4096, max_states = 2000000;
  std::string text_file, tokenizer = "chars";  // chars | bytes | words
  std::int64_t vocabulary_max = 0;              // words: the vocabulary's size with <unk> (0: every word)
  std::int64_t stride = 1;
  OneLayerShape shape;
  double eps = 1e-4;
  std::string init_file;            // initial weights ("": N(0, eps^2))
  std::int64_t weights_every = 1;   // WQ, WK, W1 at every k-th record and the last (0: first and last)
  StageThresholds stages;           // the onset criteria's thresholds (stages.*)
  std::uint64_t seed = 1;
  FlowSettings flow;
  double time = 100;
  std::int64_t records = 200;
  double divergence = 1e3;  // a loss above this many times the loss at t = 0 fails the run (0: never)
};
MarkovParams markov_params(const Deck& deck);

class MarkovRun;

class MarkovStudy : public Study {
 public:
  static DeckSchema schema();
  MarkovStudy(const Comm& comm, const Deck& deck);
  ~MarkovStudy() override;
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return params_.shape.d; }

 private:
  const Comm& comm_;
  MarkovParams params_;
  TokenizedText text_;
  std::int64_t items_ = 0;  // over all ranks
  std::unique_ptr<MarkovRun> state_;
};

}  // namespace tokdyn
