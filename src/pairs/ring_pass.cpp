#include "tokdyn/pairs/ring_pass.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

RingPass::RingPass(MPI_Comm comm, const Partition& partition, int width)
    : comm_(comm), partition_(partition), width_(width) {
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  const std::size_t capacity = static_cast<std::size_t>(partition_.max_count()) * width_;
  if (capacity > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError("a rank's block of " + std::to_string(partition_.max_count()) +
                     " tokens is too large for one MPI message: use more ranks");
  current_.resize(std::max<std::size_t>(capacity, 1));
  if (size_ > 1) next_.resize(current_.size());
}

void RingPass::run(const double* local, const Visit& visit, int steps) {
  if (steps < 0 || steps > size_) steps = size_;
  const int right = (rank_ + 1) % size_, left = (rank_ - 1 + size_) % size_;
  const std::int64_t own = partition_.count(rank_);
  std::copy(local, local + own * width_, current_.begin());
  for (int step = 0; step < steps; ++step) {
    const int holder = (rank_ - step + size_) % size_;  // whose block is in current_
    std::array<MPI_Request, 2> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (step + 1 < steps) {
      // Pass the block on while it is being visited; receive the next one from the left.
      const int incoming = (rank_ - step - 1 + 2 * size_) % size_;
      const int tag = step % 32768;
      TOKDYN_MPI_CHECK(MPI_Irecv(next_.data(), static_cast<int>(partition_.count(incoming) * width_), MPI_DOUBLE,
                                 left, tag, comm_, &requests[0]));
      TOKDYN_MPI_CHECK(MPI_Isend(current_.data(), static_cast<int>(partition_.count(holder) * width_), MPI_DOUBLE,
                                 right, tag, comm_, &requests[1]));
    }
    visit(current_.data(), partition_.count(holder), partition_.begin(holder), step);
    if (step + 1 < steps) {
      TOKDYN_MPI_CHECK(MPI_Waitall(2, requests.data(), MPI_STATUSES_IGNORE));
      current_.swap(next_);
    }
  }
}

}  // namespace tokdyn
