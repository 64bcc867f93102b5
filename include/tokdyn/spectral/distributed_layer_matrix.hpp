// The layer matrix F_t = O_t V_t (doc/science.md section 7.1) spread over ranks by rows, built without
// any rank holding all of V, and the matrix-free operator x -> O_t (V_t x) that never forms F_t.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// This rank's row block of F_t: [rows.count(rank), d] row-major, rows = Partition(d, P). Each rank reads
// its rows of O_t [rows, D] and its block of rows of V_t (Partition(D, P)); the V blocks travel once around
// the ring of ranks and F_rows += O_rows[:, block] V_block. Memory O(d D / P); bitwise reproducible at a
// fixed rank count (the blocks arrive in a fixed order). Collective; NaN or Inf in any rank's rows is an
// InputError on every rank (read_collectively).
std::vector<double> distributed_layer_rows(MPI_Comm comm, const WeightSource& source, std::int64_t t);

// F_t (or I + F_t with residual) applied without forming it: this rank holds its rows of O_t [rows, D]
// and its block of rows of V_t [Drows, d]; y = O (V x) gathers x and then z = V x (vectors of length d
// and D) between the two products. Memory O(d D / P), two d D-flop products per application. Constructing
// it is collective: NaN or Inf in any rank's rows is an InputError on every rank.
class LayerOperator {
 public:
  LayerOperator(MPI_Comm comm, const WeightSource& source, std::int64_t t, bool residual);

  // x_local, y_local: this rank's entries [rows.count(rank)] of d-vectors. y = F x (+ x).
  void apply(const double* x_local, double* y_local) const;
  // y = F^T x (+ x) = V^T (O^T x) (+ x), for left eigenvectors.
  void apply_transpose(const double* x_local, double* y_local) const;

  const Partition& rows() const { return rows_; }
  int d() const { return d_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, d_ = 0, width_ = 0;
  bool residual_ = false;
  Partition rows_, width_rows_;           // of d and of D over the ranks
  std::vector<double> output_rows_;        // [rows, D]
  std::vector<double> value_rows_;         // [Drows, d]
  mutable std::vector<double> x_all_;      // [d]
  mutable std::vector<double> z_all_;      // [D]
  mutable std::vector<double> z_local_;    // [Drows]
  mutable std::vector<double> partial_;    // [d] (transpose: V^T w before the reduce-scatter)
};

}  // namespace tokdyn
