// Steering (spec power-method section 4, construction adopted): a rank-1 change of the last layer's output
// matrix that makes a chosen unit vector u its principal eigenvector, O' = O + alpha u w^T, w = pinv(V^T) u.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/partition.hpp"
#include "tokdyn/spectral/layer_weights.hpp"

namespace tokdyn {

class PowerLayer;

// u / |u| [d]; InputError naming `what` when u has the wrong length, is zero or holds NaN/Inf.
std::vector<double> unit_target(const std::vector<double>& u, int d, const std::string& what);

// The layer with O' = O + alpha u w^T, w = pinv(V^T) u [D] (minimum-norm least squares, LAPACK dgelsd; singular
// values of V below 1e-12 s_max count as zero). Then F' = O' V = F + alpha u (P u)^T with P the orthogonal
// projector onto range(V^T); P u = u, i.e. F' = F + alpha u u^T exactly, when V [D, d] has rank d.
// value_rank (optional): the numerical rank of V.
LayerWeights steer_layer(const LayerWeights& w, const std::vector<double>& u, double alpha, int* value_rank = nullptr);

// Mean and min over all tokens of |<x_i, u>| / |x_i| (u unit); x: this rank's rows [n_local, d].
struct TargetAlignment {
  double mean = 0, min = 0;
};
TargetAlignment target_alignment(MPI_Comm comm, const Partition& partition, const double* x, const std::vector<double>& u);

// One strength c of a sweep: alpha = c |lambda_1(F_L)|, the outputs' alignment with u after the steered last
// layer, and the spectrum of F'_L (lambda_1, the gap 1 - |lambda_2|/|lambda_1| of F'_L, |<v_1(F'_L), u>|).
struct SteeringPoint {
  double strength = 0, alpha = 0;
  TargetAlignment alignment;
  double lambda1_re = 0, lambda1_im = 0, gap = 0, eigvec_alignment = 0;
  int value_rank = 0;
};
// x_in: the input x(L-1) of the last layer (this rank's rows; the same for every c, since only layer L-1 changes);
// last: its weights, applied by `layer` (collective). lambda1_modulus: |lambda_1(F_L)| of the unsteered layer.
std::vector<SteeringPoint> steering_sweep(MPI_Comm comm, PowerLayer& layer, const LayerWeights& last,
                                          std::int64_t last_index, const std::vector<double>& x_in,
                                          const std::vector<double>& u, double lambda1_modulus,
                                          const std::vector<double>& strengths);

}  // namespace tokdyn
