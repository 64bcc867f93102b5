// Steering (doc/science.md section 7.4, construction adopted): a rank-1 change of the last layer's output
// matrix that makes a chosen unit vector u its principal eigenvector, O' = O + alpha u w^T, w = pinv(V^T) u.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

class PowerLayer;

// u / |u| [d]; InputError naming `what` when u has the wrong length, is zero or holds NaN/Inf.
std::vector<double> unit_target(const std::vector<double>& u, int d, const std::string& what);

// The layer with O' = O + alpha u w^T, w = pinv(V^T) u [D] (minimum-norm least squares, LAPACK dgelsd; singular
// values of V below 1e-12 s_max count as zero). Then F' = O' V = F + alpha u (P u)^T with P the orthogonal
// projector onto range(V^T); P u = u, i.e. F' = F + alpha u u^T exactly, when V [D, d] has rank d.
// value_rank (optional): the numerical rank of V.
LayerWeights steer_layer(const LayerWeights& w, const std::vector<double>& u, double alpha, int* value_rank = nullptr);
// Its two halves: w = pinv(V^T) u (the O(d D^2) part, independent of alpha), and O' = O + alpha u w^T.
std::vector<double> steering_coefficients(const LayerWeights& w, const std::vector<double>& u, int* value_rank = nullptr);
LayerWeights steered_layer(const LayerWeights& w, const std::vector<double>& u, const std::vector<double>& coef,
                           double alpha);

// Mean and min over all tokens of |<x_i, u>| / |x_i| (u unit); x: this rank's rows [n_local, d].
struct TargetAlignment {
  double mean = 0, min = 0;
};
TargetAlignment target_alignment(MPI_Comm comm, const Partition& partition, const double* x, const std::vector<double>& u);

// One strength c of a sweep: alpha_t = c |lambda_1(F_t)| for each steered layer t, the outputs' alignment with
// u after the last layer, and the spectrum of the steered last layer F'_L (lambda_1, its gap
// 1 - |lambda_2|/|lambda_1|, |<v_1(F'_L), u>|). alpha: the last layer's.
struct SteeringPoint {
  double strength = 0, alpha = 0;
  TargetAlignment alignment;
  double lambda1_re = 0, lambda1_im = 0, gap = 0, eigvec_alignment = 0;
  int value_rank = 0;  // of V_L
};

// Which layers are steered: [first, layers), first = layers - 1 for the construction of doc/science.md
// section 7.4 (the last layer alone); first = 0 steers every layer, which is what perturbing the one output
// matrix of a shared-weight (ALBERT-like) model does.
struct SteeringRun {
  std::function<LayerWeights(std::int64_t)> weights;  // layer t
  std::int64_t first = 0, layers = 0;
  bool shared = false;                  // weights(t) is the same for every t: steered once per c
  std::vector<double> lambda1_modulus;  // |lambda_1(F_t)| for t in [first, layers)
};
// x_first: the input x(first) of the first steered layer (this rank's rows; the same for every c). The layers
// are applied by `layer` (collective).
std::vector<SteeringPoint> steering_sweep(MPI_Comm comm, PowerLayer& layer, const SteeringRun& run,
                                          const std::vector<double>& x_first, const std::vector<double>& u,
                                          const std::vector<double>& strengths);

}  // namespace tokdyn
