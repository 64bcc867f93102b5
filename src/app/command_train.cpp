// tokdyn train: a small GPT trained by energy-conserving descent or a baseline, with symmetry-breaking
// biases and the Noether charges of its heads (doc/science.md section 10).
#include "commands.hpp"
#include "tokdyn/studies/train_study.hpp"

namespace tokdyn {

DeckSchema train_schema() { return TrainStudy::schema(); }

int run_train(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<TrainStudy>(comm, schema, request, "train");
}

}  // namespace tokdyn
