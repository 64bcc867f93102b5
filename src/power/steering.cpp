#include "tokdyn/power/steering.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/lapack.hpp"
#include "tokdyn/power/alignment.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/power/power_layer.hpp"

namespace tokdyn {

std::vector<double> unit_target(const std::vector<double>& u, int d, const std::string& what) {
  if (static_cast<int>(u.size()) != d)
    throw InputError(what + " has " + std::to_string(u.size()) + " entries, the model width is d = " + std::to_string(d));
  double s = 0;
  for (double v : u) s += v * v;
  if (!std::isfinite(s)) throw InputError(what + " holds NaN or Inf");
  if (!(s > 0)) throw InputError(what + " is the zero vector: a steering target needs a direction");
  std::vector<double> unit(u);
  const double inv = 1 / std::sqrt(s);
  for (double& v : unit) v *= inv;
  return unit;
}

std::vector<double> steering_coefficients(const LayerWeights& w, const std::vector<double>& u, int* value_rank) {
  const int d = w.d, D = w.width();
  // w = pinv(V^T) u: V^T is [d, D]; V [D, d] row-major is V^T column-major, so transpose into row-major V^T.
  std::vector<double> vt(static_cast<std::size_t>(d) * D);
  for (int k = 0; k < D; ++k)
    for (int i = 0; i < d; ++i) vt[static_cast<std::size_t>(i) * D + k] = w.value[static_cast<std::size_t>(k) * d + i];
  std::vector<double> coef(D);
  const int rank = least_squares(d, D, vt.data(), u.data(), coef.data(), 1e-12);
  if (value_rank) *value_rank = rank;
  return coef;
}

LayerWeights steered_layer(const LayerWeights& w, const std::vector<double>& u, const std::vector<double>& coef,
                           double alpha) {
  const int d = w.d, D = w.width();
  LayerWeights steered = w;
  // O' [d, D] = O + alpha u w^T
  for (int i = 0; i < d; ++i)
    for (int k = 0; k < D; ++k) steered.output[static_cast<std::size_t>(i) * D + k] += alpha * u[i] * coef[k];
  return steered;
}

LayerWeights steer_layer(const LayerWeights& w, const std::vector<double>& u, double alpha, int* value_rank) {
  return steered_layer(w, u, steering_coefficients(w, u, value_rank), alpha);
}

TargetAlignment target_alignment(MPI_Comm comm, const Partition& partition, const double* x,
                                 const std::vector<double>& u) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const int d = static_cast<int>(u.size());
  const std::int64_t n = partition.count(rank);
  double sum = 0, least = std::numeric_limits<double>::infinity();
  for (std::int64_t i = 0; i < n; ++i) {
    double p = 0, xx = 0;
    for (int a = 0; a < d; ++a) {
      p += x[i * d + a] * u[a];
      xx += x[i * d + a] * x[i * d + a];
    }
    const double g = std::abs(p) / std::sqrt(xx);
    sum += g;
    least = std::min(least, g);
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_DOUBLE, MPI_MIN, comm));
  return {sum / static_cast<double>(partition.n_global), least};
}

std::vector<SteeringPoint> steering_sweep(MPI_Comm comm, PowerLayer& layer, const SteeringRun& run,
                                          const std::vector<double>& x_first, const std::vector<double>& u,
                                          const std::vector<double>& strengths) {
  if (static_cast<std::int64_t>(run.lambda1_modulus.size()) != run.layers - run.first)
    throw std::invalid_argument("steering_sweep: one |lambda_1| per steered layer");
  // pinv(V_t^T) u of every steered layer once (once in all for shared weights), not once per strength.
  std::vector<std::vector<double>> coef;
  int value_rank = 0;
  for (std::int64_t t = run.first; t < run.layers && (t == run.first || !run.shared); ++t)
    coef.push_back(steering_coefficients(run.weights(t), u, &value_rank));
  std::vector<SteeringPoint> points;
  std::vector<double> x;
  for (double c : strengths) {
    SteeringPoint p;
    p.strength = c;
    p.value_rank = value_rank;  // of V_L
    x = x_first;
    LayerWeights steered;
    for (std::int64_t t = run.first; t < run.layers; ++t) {
      p.alpha = c * run.lambda1_modulus[t - run.first];
      if (t == run.first || !run.shared) steered = steered_layer(run.weights(t), u, coef[t - run.first], p.alpha);
      layer.apply(steered, t, x.data());
    }
    p.alignment = target_alignment(comm, layer.partition(), x.data(), u);
    const LeadingDirection lead = leading_direction(steered.d, layer_matrix(steered), false);
    p.lambda1_re = lead.re;
    p.lambda1_im = lead.im;
    p.gap = lead.gap;
    p.eigvec_alignment = alignment(lead, u.data());
    points.push_back(p);
  }
  return points;
}

}  // namespace tokdyn
