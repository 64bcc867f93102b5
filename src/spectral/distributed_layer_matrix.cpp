#include "tokdyn/spectral/distributed_layer_matrix.hpp"

#include <algorithm>
#include <string>

#include "tokdyn/attention/ring_pass.hpp"
#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"

namespace tokdyn {

namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

// MPI counts and displacements of a block partition (Allgatherv, Reduce_scatter).
void counts_of(const Partition& p, std::vector<int>& counts, std::vector<int>& displs) {
  counts.resize(p.ranks);
  displs.resize(p.ranks);
  for (int r = 0; r < p.ranks; ++r) {
    counts[r] = static_cast<int>(p.count(r));
    displs[r] = static_cast<int>(p.begin(r));
  }
}

}  // namespace

std::vector<double> distributed_layer_rows(MPI_Comm comm, const WeightSource& source, std::int64_t t) {
  const int rank = rank_of(comm), size = size_of(comm);
  const int d = source.d(), width = source.heads() * source.head_dim();
  const Partition rows(d, size), width_rows(width, size);
  const std::int64_t begin = rows.begin(rank), count = rows.count(rank);
  const std::vector<double> output = source.output_rows(t, begin, begin + count);  // [rows, D]
  const std::vector<double> value =
      source.value_rows(t, width_rows.begin(rank), width_rows.begin(rank) + width_rows.count(rank));  // [Drows, d]
  std::vector<double> f(static_cast<std::size_t>(count) * d, 0.0);  // [rows, d]
  RingPass ring(comm, width_rows, d);
  // Block b of V (rows [b0, b0 + nb) of V, columns [b0, b0 + nb) of O): F_rows += O_rows[:, b0:b0+nb] V_b.
  ring.run(value.data(), [&](const double* block, std::int64_t nb, std::int64_t b0, int) {
    if (count > 0 && nb > 0)
      gemm_nn(static_cast<int>(count), d, static_cast<int>(nb), 1.0, output.data() + b0, width, block, d, 1.0,
              f.data(), d);
  });
  return f;
}

LayerOperator::LayerOperator(MPI_Comm comm, const WeightSource& source, std::int64_t t, bool residual)
    : comm_(comm), rank_(rank_of(comm)), d_(source.d()), width_(source.heads() * source.head_dim()),
      residual_(residual), rows_(d_, size_of(comm)), width_rows_(width_, size_of(comm)) {
  const std::int64_t begin = rows_.begin(rank_), wbegin = width_rows_.begin(rank_);
  output_rows_ = source.output_rows(t, begin, begin + rows_.count(rank_));
  value_rows_ = source.value_rows(t, wbegin, wbegin + width_rows_.count(rank_));
  x_all_.resize(d_);
  z_all_.resize(width_);
  z_local_.resize(width_rows_.count(rank_));
  partial_.resize(std::max(d_, width_));
}

void LayerOperator::apply(const double* x_local, double* y_local) const {
  const int rows = static_cast<int>(rows_.count(rank_)), wrows = static_cast<int>(width_rows_.count(rank_));
  std::vector<int> counts, displs;
  counts_of(rows_, counts, displs);
  TOKDYN_MPI_CHECK(MPI_Allgatherv(x_local, rows, MPI_DOUBLE, x_all_.data(), counts.data(), displs.data(), MPI_DOUBLE,
                                  comm_));
  // z_local [Drows] = V_rows [Drows, d] x [d]
  if (wrows > 0) gemm_nn(wrows, 1, d_, 1.0, value_rows_.data(), d_, x_all_.data(), 1, 0.0, z_local_.data(), 1);
  counts_of(width_rows_, counts, displs);
  TOKDYN_MPI_CHECK(MPI_Allgatherv(z_local_.data(), wrows, MPI_DOUBLE, z_all_.data(), counts.data(), displs.data(),
                                  MPI_DOUBLE, comm_));
  // y_local [rows] = O_rows [rows, D] z [D] (+ x_local)
  if (rows == 0) return;
  for (int i = 0; i < rows; ++i) y_local[i] = residual_ ? x_local[i] : 0.0;
  if (width_ > 0) gemm_nn(rows, 1, width_, 1.0, output_rows_.data(), width_, z_all_.data(), 1, 1.0, y_local, 1);
}

void LayerOperator::apply_transpose(const double* x_local, double* y_local) const {
  const int rows = static_cast<int>(rows_.count(rank_)), wrows = static_cast<int>(width_rows_.count(rank_));
  std::vector<int> counts, displs;
  // w^T [1, D] = x_local^T [1, rows] O_rows [rows, D], summed over ranks; each rank keeps its block of w.
  std::fill(partial_.begin(), partial_.begin() + width_, 0.0);
  if (rows > 0 && width_ > 0) gemm_nn(1, width_, rows, 1.0, x_local, rows, output_rows_.data(), width_, 0.0,
                                      partial_.data(), width_);
  counts_of(width_rows_, counts, displs);
  TOKDYN_MPI_CHECK(MPI_Reduce_scatter(partial_.data(), z_local_.data(), counts.data(), MPI_DOUBLE, MPI_SUM, comm_));
  // y^T [1, d] = w_block^T [1, Drows] V_rows [Drows, d], summed over ranks and scattered by rows.
  std::fill(partial_.begin(), partial_.begin() + d_, 0.0);
  if (wrows > 0) gemm_nn(1, d_, wrows, 1.0, z_local_.data(), wrows, value_rows_.data(), d_, 0.0, partial_.data(), d_);
  counts_of(rows_, counts, displs);
  TOKDYN_MPI_CHECK(MPI_Reduce_scatter(partial_.data(), y_local, counts.data(), MPI_DOUBLE, MPI_SUM, comm_));
  if (residual_)
    for (int i = 0; i < rows; ++i) y_local[i] += x_local[i];
}

}  // namespace tokdyn
