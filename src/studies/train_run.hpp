// The run state of tokdyn train (src/studies/train_run.cpp). Internal to the study.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/run/state.hpp"
#include "tokdyn/studies/train_study.hpp"

namespace tokdyn {

// Float or double parameters by p.single; split and vocabulary must outlive the state.
std::unique_ptr<RunState> make_train_run(const Comm& comm, const TrainParams& p, const TextSplit& split,
                                         const std::vector<std::string>& vocabulary);

}  // namespace tokdyn
