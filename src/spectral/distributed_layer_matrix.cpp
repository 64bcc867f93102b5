#include "tokdyn/spectral/distributed_layer_matrix.hpp"

#include <algorithm>
#include <string>

#include "tokdyn/pairs/ring_pass.hpp"
#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"

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

// y [m] = A x (trans false) or A^T x (trans true), A [m, n] row-major (lda n): the operator's products.
// BLAS gemv, not gemm with one column: that is 2-2.5 times slower here (OpenBLAS 0.3.21, n = 8192).
void gemv(bool trans, int m, int n, const double* a, const double* x, double beta, double* y) {
  cblas_dgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, m, n, 1.0, a, n, x, 1, beta, y, 1);
}

}  // namespace

std::vector<double> distributed_layer_rows(MPI_Comm comm, const WeightSource& source, std::int64_t t) {
  const int rank = rank_of(comm), size = size_of(comm);
  const int d = source.d(), width = source.heads() * source.head_dim();
  const Partition rows(d, size), width_rows(width, size);
  const std::int64_t begin = rows.begin(rank), count = rows.count(rank);
  // Every rank reads its rows; NaN or Inf in any rank's stops all of them before the ring.
  const std::vector<double> output =
      read_collectively(comm, [&] { return source.output_rows(t, begin, begin + count); });  // [rows, D]
  const std::vector<double> value = read_collectively(comm, [&] {
    return source.value_rows(t, width_rows.begin(rank), width_rows.begin(rank) + width_rows.count(rank));
  });  // [Drows, d]
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
  output_rows_ = read_collectively(comm, [&] { return source.output_rows(t, begin, begin + rows_.count(rank_)); });
  value_rows_ = read_collectively(comm, [&] { return source.value_rows(t, wbegin, wbegin + width_rows_.count(rank_)); });
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
  if (wrows > 0) gemv(false, wrows, d_, value_rows_.data(), x_all_.data(), 0.0, z_local_.data());
  counts_of(width_rows_, counts, displs);
  TOKDYN_MPI_CHECK(MPI_Allgatherv(z_local_.data(), wrows, MPI_DOUBLE, z_all_.data(), counts.data(), displs.data(),
                                  MPI_DOUBLE, comm_));
  // y_local [rows] = O_rows [rows, D] z [D] (+ x_local)
  if (rows == 0) return;
  for (int i = 0; i < rows; ++i) y_local[i] = residual_ ? x_local[i] : 0.0;
  if (width_ > 0) gemv(false, rows, width_, output_rows_.data(), z_all_.data(), 1.0, y_local);
}

void LayerOperator::apply_transpose(const double* x_local, double* y_local) const {
  const int rows = static_cast<int>(rows_.count(rank_)), wrows = static_cast<int>(width_rows_.count(rank_));
  std::vector<int> counts, displs;
  // w [D] = O_rows^T [D, rows] x_local [rows], summed over ranks; each rank keeps its block of w.
  std::fill(partial_.begin(), partial_.begin() + width_, 0.0);
  if (rows > 0 && width_ > 0) gemv(true, rows, width_, output_rows_.data(), x_local, 0.0, partial_.data());
  counts_of(width_rows_, counts, displs);
  TOKDYN_MPI_CHECK(MPI_Reduce_scatter(partial_.data(), z_local_.data(), counts.data(), MPI_DOUBLE, MPI_SUM, comm_));
  // y [d] = V_rows^T [d, Drows] w_block [Drows], summed over ranks and scattered by rows.
  std::fill(partial_.begin(), partial_.begin() + d_, 0.0);
  if (wrows > 0) gemv(true, wrows, d_, value_rows_.data(), z_local_.data(), 0.0, partial_.data());
  counts_of(rows_, counts, displs);
  TOKDYN_MPI_CHECK(MPI_Reduce_scatter(partial_.data(), y_local, counts.data(), MPI_DOUBLE, MPI_SUM, comm_));
  if (residual_)
    for (int i = 0; i < rows; ++i) y_local[i] += x_local[i];
}

}  // namespace tokdyn
