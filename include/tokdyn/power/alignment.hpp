// Alignment of the tokens with the leading eigenvector(s) of each layer's acting matrix, and the final
// state of a power-method run (doc/science.md section 7.4; the definitions adopted are stated here).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// The leading eigen-direction of the matrix M that acts on the tokens: M = F, or I + F with the residual
// (same eigenvectors, eigenvalues 1 + lambda, so the leading one maximises |1 + lambda|). Computed by
// dense_eigen (LAPACK dgeev) on every rank alike.
struct LeadingDirection {
  int d = 0;
  bool pair = false;      // lambda_1 of M is a complex pair lambda, conj(lambda)
  double re = 0, im = 0;  // lambda_1 of M (im > 0 for a pair)
  double modulus = 0;     // |lambda_1|
  // |lambda_2| for a real lambda_1, |lambda_3| for a pair: the first eigenvalue outside the leading one
  // (or pair); the spectral gap g = 1 - next_modulus / modulus.
  double next_modulus = 0, gap = 0;
  double angle() const;  // arg lambda_1 in (-pi, pi]: the rotation per layer on S for a pair
  // v_1 (unit) for a real lambda_1; for a pair, Re v_1 then Im v_1 (|Re v|^2 + |Im v|^2 = 1), v_1 the
  // eigenvector of the member with im > 0. [1, d] or [2, d].
  std::vector<double> eigvec;
  // Orthonormal basis of span(v_1) ([1, d]) or of the real plane S = span(Re v_1, Im v_1) ([2, d]).
  std::vector<double> basis;
  // Orthonormal basis [2, d] of the plane of v_1, v_2 (S itself for a pair; v_2 = Re of the second
  // eigenvector when that is complex): the plane the trajectories are drawn in.
  std::vector<double> plane;
  int rank() const { return pair ? 2 : 1; }
};

// f: F [d, d] row-major. residual: the acting matrix is I + F.
LeadingDirection leading_direction(int d, const std::vector<double>& f, bool residual);
// The same from the leading `count` eigenpairs sorted by decreasing modulus (dense_eigen's layout: a pair
// as rows Re v, Im v of right [count, d]); count >= 2 (3 when lambda_1 is a pair) for the gap and plane.
LeadingDirection leading_direction_from(int d, int count, const double* re, const double* im, const double* right);
// The same for layer t of source by Krylov–Schur on the matrix-free operator (no rank forms F; for d
// beyond a dense solve), the vectors gathered on every rank. Collective; InputError when it does not converge.
LeadingDirection leading_direction_krylov(MPI_Comm comm, const WeightSource& source, std::int64_t t, bool residual);

// gamma(x) = |P x| / |x|, P the orthogonal projector onto span(v_1) (real) or S (pair).
double alignment(const LeadingDirection& lead, const double* x);
// |x - P x| / |x|: the sine of the angle between x and span(v_1) or S, computed without cancellation
// (1 - gamma loses all digits once the sine is below 1e-8).
double misalignment(const LeadingDirection& lead, const double* x);
// The phase of x in the eigen-basis of a pair: P x = c1 Re v + c2 Im v (least squares in that non-orthonormal
// basis) is Re(z v) with z = c1 - i c2, and M acts on S as z -> lambda_1 z, so the phase arg z advances by
// exactly arg lambda_1 per layer for tokens in S. Returns arg z in (-pi, pi].
double phase(const LeadingDirection& lead, const double* x);

// Per-layer summary of layer t, with before = x(t) and after = x(t+1) (this rank's rows [n_local, d]),
// against that layer's leading direction. Statistics are exact over all N tokens: the per-token values
// are gathered and ordered by global index, so every rank computes the same bits at any rank count.
struct LayerAlignment {
  double gamma_mean = 0, gamma_median = 0, gamma_q1 = 0, gamma_q3 = 0;  // of x(t+1); quartiles: linear
                                                                        // interpolation (numpy's default)
  double gamma_in_mean = 0;  // of x(t), against the same v_{1,t}
  double sin_mean = 0;       // mean misalignment of x(t+1)
  // Fraction of tokens with gamma(x_i(t+1)) > gamma(x_i(t)), decided on the sines (misalignment(t+1) <
  // misalignment(t), the same order) so that it stays meaningful once gamma = 1 to round-off.
  double rho = 0;
  double rotation = 0;       // pair only (else NaN): mean over tokens of arg(z_i(t+1) / z_i(t)) in (-pi, pi]
};
LayerAlignment layer_alignment(MPI_Comm comm, const Partition& partition, const LeadingDirection& lead,
                               const double* before, const double* after);

// E|<x, v>| for x uniform on S^{d-1} and large d: sqrt(2 / (pi d)) (doc/science.md section 7.4); for a plane,
// E|P_S x| ~ sqrt(pi / (2 d)).
double random_alignment_baseline(int d, bool plane);

// The final state of a run (definitions adopted; tol in radians, W = window layers). A token "moves" in a
// layer when |x_i(t+1) - x_i(t)| > tol; the run has "settled" when no token moved in the last layer.
//   consensus:   settled, and every token within angle tol of the normalised mean m of the tokens;
//   bipartite:   settled, not consensus; with s_i = sign <x_i, x_0> (x_0 the token of global index 0) and m
//                the normalised sum of s_i x_i, every token within angle tol of +m or -m, both signs present
//                (so every |cos(x_i, x_j)| >= cos(2 tol));
//   limit_cycle: over each of the last W layers every token lies within tol of the plane P of the last layer
//                (sine of the angle to P <= tol) and moves: it circulates in a plane without converging (a
//                rotating cluster counts, as in the complex-pair claim);
//   none:        anything else (also when the run has fewer than W layers and has not settled).
class FinalStateDetector {
 public:
  // plane: orthonormal [2, d] (LeadingDirection::plane of the last layer).
  FinalStateDetector(MPI_Comm comm, const Partition& partition, int d, std::vector<double> plane, double tol,
                     std::int64_t window);
  // After each layer (collective).
  void observe(const double* before, const double* after);
  // At the end, from the final tokens (collective): "consensus", "bipartite", "limit_cycle" or "none".
  std::string classify(const double* x) const;
  std::int64_t circulating_layers() const { return trailing_; }
  // What observe() carries from layer to layer (for checkpoints).
  bool settled() const { return settled_; }
  void restore(std::int64_t circulating_layers, bool settled) { trailing_ = circulating_layers, settled_ = settled; }

 private:
  MPI_Comm comm_;
  Partition partition_;
  int d_, rank_ = 0;
  std::vector<double> plane_;
  double tol_;
  std::int64_t window_, trailing_ = 0;  // consecutive last layers in the plane and moving
  bool settled_ = true;                 // no token moved in the last observed layer
};

}  // namespace tokdyn
