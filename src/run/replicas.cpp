#include "tokdyn/run/replicas.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

ReplicaStudy::ReplicaStudy(const Comm& comm, std::int64_t replicas, std::size_t width, bool distributed)
    : comm_(comm), replicas_(replicas), width_(width), distributed_(distributed),
      table_(static_cast<std::size_t>(replicas) * width, 0.0) {}

std::int64_t ReplicaStudy::advance(std::int64_t done) {
  const std::int64_t first = done;
  std::int64_t next = done + 1;
  if (distributed_) {
    compute(done, table_.data() + static_cast<std::size_t>(done) * width_);
  } else {
    // rows [P, width]: rank r's replica first + r, NaN where there is none.
    const int P = comm_.size();
    std::vector<double> mine(width_, std::numeric_limits<double>::quiet_NaN()), rows(static_cast<std::size_t>(P) * width_);
    if (first + comm_.rank() < replicas_) compute(first + comm_.rank(), mine.data());
    TOKDYN_MPI_CHECK(MPI_Allgather(mine.data(), static_cast<int>(width_), MPI_DOUBLE, rows.data(),
                                   static_cast<int>(width_), MPI_DOUBLE, comm_.get()));
    next = std::min(replicas_, first + P);
    std::copy(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>((next - first) * width_),
              table_.begin() + static_cast<std::ptrdiff_t>(first * width_));
  }
  // Every rank holds the same rows: the check needs no agreement beyond the run's poll.
  for (std::int64_t r = first; r < next && finite_; ++r)
    for (std::size_t k = 0; k < width_; ++k)
      if (!std::isfinite(table_[r * width_ + k])) finite_ = false, bad_replica_ = r;
  return next;
}

std::string ReplicaStudy::nonfinite_message(std::int64_t step) const {
  return "NaN or Inf in the results of replica " + std::to_string(bad_replica_) +
         " (reduce model.T/model.L, attention.beta or the weight scales)";
}

void ReplicaStudy::save(CheckpointWriter& out) const { out.values("replica_rows", table_); }

void ReplicaStudy::restore(const CheckpointReader& in, RunFile& file) {
  const std::vector<double> rows = in.values("replica_rows");
  if (rows.size() != table_.size())
    throw InputError("checkpoint: the replica table has " + std::to_string(rows.size()) + " values, this run " +
                     std::to_string(table_.size()));
  table_ = rows;
}

void run_replicas(ReplicaStudy& study) {
  for (std::int64_t done = 0; done < study.steps();) {
    done = study.advance(done);
    if (!study.finite()) throw InputError(study.nonfinite_message(done));  // every rank holds the rows
  }
}

}  // namespace tokdyn
