#include "tokdyn/pairs/half_ring.hpp"

#include <limits>
#include <string>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

HalfRing::HalfRing(MPI_Comm comm, const Partition& partition, int width, int acc_width)
    : comm_(comm), partition_(partition), width_(width), acc_width_(acc_width) {
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  const std::size_t capacity = static_cast<std::size_t>(partition_.max_count()) * (width_ + acc_width_);
  if (capacity > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError("a rank's block of " + std::to_string(partition_.max_count()) +
                     " tokens is too large for one MPI message: use more ranks");
  current_.resize(std::max<std::size_t>(capacity, 1));
  if (size_ > 1) next_.resize(current_.size());
}

void HalfRing::run(const double* local, const Visit& visit, double* home_acc) {
  const int p = size_, steps = p / 2 + 1, row_width = width_ + acc_width_;
  const int right = (rank_ + 1) % p, left = (rank_ - 1 + p) % p;
  const std::int64_t own = partition_.count(rank_);
  std::copy(local, local + own * width_, current_.begin());
  std::fill(current_.begin() + own * width_, current_.begin() + own * row_width, 0.0);
  for (int step = 0; step < steps; ++step) {
    const int holder = (rank_ - step + p) % p;
    const std::int64_t rows = partition_.count(holder);
    PairRange r{0, own, 0, rows, step == 0};
    if (step > 0 && 2 * step == p) {
      if (rank_ < p / 2)
        r.i_hi = own / 2;
      else
        r.j_lo = rows / 2;
    }
    visit(current_.data(), current_.data() + rows * width_, rows, partition_.begin(holder), r);
    if (step + 1 < steps) {
      const int incoming = (rank_ - step - 1 + 2 * p) % p;
      TOKDYN_MPI_CHECK(MPI_Sendrecv(current_.data(), static_cast<int>(rows * row_width), MPI_DOUBLE, right, step,
                                    next_.data(), static_cast<int>(partition_.count(incoming) * row_width),
                                    MPI_DOUBLE, left, step, comm_, MPI_STATUS_IGNORE));
      current_.swap(next_);
    }
  }
  if (acc_width_ == 0) return;
  // The block in hand is rank (r - S)'s, S = steps - 1: its accumulator goes home; ours comes from r + S.
  const int s = steps - 1, holder = (rank_ - s + p) % p;
  const double* acc = current_.data() + partition_.count(holder) * width_;
  if (s == 0) {
    std::copy(acc, acc + own * acc_width_, home_acc);
    return;
  }
  TOKDYN_MPI_CHECK(MPI_Sendrecv(acc, static_cast<int>(partition_.count(holder) * acc_width_), MPI_DOUBLE, holder,
                                steps, home_acc, static_cast<int>(own * acc_width_), MPI_DOUBLE, (rank_ + s) % p,
                                steps, comm_, MPI_STATUS_IGNORE));
}

}  // namespace tokdyn
