// tokdyn mlmc: E[phi(X_T)] of the tokens in the deep and many-token limits by multilevel Monte Carlo over depth or
// token count, or multi-index Monte Carlo over both (doc/science.md section 11): Giles' adaptive driver
// (mlmc/estimator.hpp) or the multi-index driver (mlmc/multi_index.hpp) on the coupled levels (mlmc/levels.hpp),
// or plain Monte Carlo at the finest index (mlmc.method = mc) to compare with. A run is a sequence of batches of
// samples of one level, spread over the ranks; its length is planned as it goes.
#pragma once

#include <memory>
#include <string>

#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/mlmc/estimator.hpp"
#include "tokdyn/mlmc/levels.hpp"
#include "tokdyn/mlmc/multi_index.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {

class MlmcRun;

// mlmc.levels: the depth L_a, the token count N_b, or both (multi-index).
enum class LevelFamily { depth, tokens, both };

struct MlmcStudyParams {
  LevelSetup levels;
  LevelFamily family = LevelFamily::depth;
  MlmcOptions options;      // depth, tokens, and plain Monte Carlo (options.plain)
  MimcOptions index_options;  // both
  std::int64_t batch = 64;  // samples per step (the same on any number of ranks)
  bool fresh_tokens = false;
};

class MlmcStudy : public Study {
 public:
  static DeckSchema schema();
  MlmcStudy(const Comm& comm, const Deck& deck);
  ~MlmcStudy() override;
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  std::string plan() const override;
  int width() const override { return params_.levels.d; }

 private:
  const Comm& comm_;
  MlmcStudyParams params_;
  TokenSource tokens_;
  AttentionWeightSpec attention_weights_;  // loaded by setup(), after the memory check
  std::unique_ptr<MlmcRun> state_;
};

}  // namespace tokdyn
