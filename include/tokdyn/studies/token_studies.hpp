// The token studies: N tokens through L steps of the discrete transformer (tokdyn transformer) or of a
// limit-SDE scheme (tokdyn sde), with pair diagnostics and snapshots (dynamics/token_run.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/dynamics/dynamics.hpp"
#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/dynamics/token_run.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {

// What both share: the model's N, d, L, T, the tiles, the pair statistics and the token run.
class TokenStudy : public Study {
 public:
  RunState& setup() override;
  std::int64_t snapshot_tokens() const override { return n_; }
  int width() const override { return d_; }
  std::string plan() const override;

 protected:
  TokenStudy(const Comm& comm, const Deck& deck);
  // The step of one layer, built by setup() after the memory check.
  virtual std::unique_ptr<Dynamics> dynamics() = 0;
  MemoryEstimate token_memory() const;

  const Comm& comm_;
  std::int64_t n_, layers_;
  int d_, tile_, bins_;
  double horizon_, beta_;
  Partition partition_;
  AttentionSpec attention_;
  TokenSource tokens_;
  TokenCadence cadence_;
  PairSampling sampling_;

 private:
  std::unique_ptr<Dynamics> dynamics_;
  std::unique_ptr<PairStatisticsPass> statistics_;
  std::unique_ptr<TokenRun> state_;
};

class TransformerStudy : public TokenStudy {
 public:
  static DeckSchema schema();
  TransformerStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override;
  std::string banner() const override;
  std::string plan() const override;

 private:
  std::unique_ptr<Dynamics> dynamics() override;
  bool mlp_on_;
  MlpParams mlp_;
  std::string norm_;                // model.norm
  std::vector<double> ngpt_alpha_;  // [d]
};

class SdeStudy : public TokenStudy {
 public:
  static DeckSchema schema();
  SdeStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override;
  std::string banner() const override;

 private:
  std::unique_ptr<Dynamics> dynamics() override;
  std::string scheme_;
  SdeParams params_;
  FieldParams field_;
  std::uint64_t seed_;
  std::int64_t modes_ = 0;
};

}  // namespace tokdyn
