#include "tokdyn/studies/convergence.hpp"

#include <algorithm>
#include <cmath>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/lapack.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/noise/kernel_function.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {
namespace {

double mean_square_distance(const std::vector<double>& a, const std::vector<double>& b, std::int64_t n) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
  return s / static_cast<double>(n);
}

std::unique_ptr<Attention> replica_attention(const ConvergenceSetup& s) {
  return replica_attention(s.attention_style, s.weights, s.n, s.tile, s.factor);
}

// Rows [replicas, 3 J] of a study -> the result's [replicas, J] arrays.
ConvergenceResult unpack(const ReplicaStudy& r, const ConvergenceSetup& s, const std::vector<std::int64_t>& levels) {
  ConvergenceResult out;
  out.levels = levels;
  out.replicas = s.replicas;
  const std::size_t J = levels.size(), R = s.replicas.size();
  for (std::size_t i = 0; i < R; ++i)
    for (std::size_t j = 0; j < J; ++j) {
      const double* row = r.rows().data() + i * 3 * J;
      out.mse_grid.push_back(row[j]);
      out.mse_sup.push_back(row[J + j]);
      out.mse_final.push_back(row[2 * J + j]);
    }
  return out;
}

void attention_substep(Attention* attention, double factor_dt, std::vector<double>& x, std::vector<double>& buffer,
                       std::int64_t n, int d) {
  if (!attention) return;
  attention->apply(x.data(), buffer.data());
  for (std::size_t k = 0; k < x.size(); ++k) x[k] += factor_dt * buffer[k];
  normalize_rows(x.data(), n, d);
}

}  // namespace

DepthReplicas::DepthReplicas(const Comm& comm, const ConvergenceSetup& s, const DepthStudy& study)
    : ReplicaStudy(comm, static_cast<std::int64_t>(s.replicas.size()), 3 * study.layers.size()), setup_(s), study_(study) {
  for (std::int64_t L : study.layers)
    if (study.reference_layers % L != 0)
      throw InputError("converge: the reference steps " + std::to_string(study.reference_layers) +
                       " are not a multiple of L = " + std::to_string(L));
}

ConvergenceResult DepthReplicas::result() const { return unpack(*this, setup_, study_.layers); }

void DepthReplicas::compute(std::int64_t ri, double* row) {
  const ConvergenceSetup& s = setup_;
  const DepthStudy& study = study_;
  const std::size_t J = study.layers.size();
  const std::uint64_t seed = replica_seed(s.seed, s.replicas[ri]);
  FieldParams fp = s.field;
  fp.seed = seed;
  const std::unique_ptr<GaussianField> field = field_styles().make(s.field_name, fp);
  // One scheme per resolution, all on the replica's Brownian path (nested: same odd part of L).
  auto make = [&](const std::string& scheme, std::int64_t steps) {
    SdeSetup setup;
    setup.params.n = s.n;
    setup.params.d = s.d;
    setup.params.steps = steps;
    setup.params.horizon = s.horizon;
    setup.params.factor = s.factor;
    setup.params.project = true;
    setup.n_local = s.n;
    setup.attention = replica_attention(s);
    setup.field = field->clone();
    setup.seed = seed;
    return sde_schemes().make(scheme, setup);
  };
  auto reference = make(study.reference_scheme, study.reference_layers);
  std::vector<std::unique_ptr<SdeScheme>> coarse;
  for (std::int64_t L : study.layers) coarse.push_back(make("projected", L));
  std::vector<double> x_ref(static_cast<std::size_t>(s.n) * s.d);
  sample_uniform_sphere(seed, 0, s.n, s.d, x_ref.data());
  std::vector<std::vector<double>> x(J, x_ref);
  std::vector<std::int64_t> done(J, 0);
  std::vector<double> grid(J, 0.0), sup(J, 0.0);
  for (std::int64_t k = 0; k < study.reference_layers; ++k) {
    reference->step(k, x_ref.data());
    for (std::size_t j = 0; j < J; ++j) {
      const std::int64_t ratio = study.reference_layers / study.layers[j];
      // The coarse state at layer floor(L t / T) of the reference time t = (k + 1) T / L_ref.
      while (done[j] < (k + 1) / ratio) coarse[j]->step(done[j]++, x[j].data());
      const double e = mean_square_distance(x[j], x_ref, s.n);
      sup[j] = std::max(sup[j], e);
      if ((k + 1) % ratio == 0) grid[j] = std::max(grid[j], e);
    }
  }
  for (std::size_t j = 0; j < J; ++j) {
    row[j] = grid[j];
    row[J + j] = sup[j];
    row[2 * J + j] = mean_square_distance(x[j], x_ref, s.n);
  }
}

// Every replica of a study at once, no run file.
template <class Replicas, class Study>
ConvergenceResult every_replica(MPI_Comm comm, const ConvergenceSetup& setup, const Study& study) {
  const Comm c(comm);
  Replicas r(c, setup, study);
  run_replicas(r);
  return r.result();
}

ConvergenceResult run_depth_study(MPI_Comm comm, const ConvergenceSetup& setup, const DepthStudy& study) {
  return every_replica<DepthReplicas>(comm, setup, study);
}

WidthReplicas::WidthReplicas(const Comm& comm, const ConvergenceSetup& s, const WidthStudy& study)
    : ReplicaStudy(comm, static_cast<std::int64_t>(s.replicas.size()), 3 * study.widths.size()), setup_(s), study_(study) {}

ConvergenceResult WidthReplicas::result() const { return unpack(*this, setup_, study_.widths); }

void WidthReplicas::compute(std::int64_t ri, double* row) {
  const ConvergenceSetup& s = setup_;
  const WidthStudy& study = study_;
  const std::size_t J = study.widths.size(), nd = static_cast<std::size_t>(s.n) * s.d;
  const int n = static_cast<int>(s.n), d = s.d;
  const double dt = s.horizon / static_cast<double>(study.layers), h = std::sqrt(dt);
  const MlpKernel& kernel = s.field.kernel;
  const KernelFunction kappa(kernel);
  const double sw2 = kernel.sigma_w * kernel.sigma_w, in = 1 / std::sqrt(static_cast<double>(d));
  std::vector<double> cov(static_cast<std::size_t>(n) * n), root(cov.size()), gram(cov.size());
  std::vector<double> z(nd), bias(d), g(nd), buffer(nd), hidden;
  const std::uint64_t seed = replica_seed(s.seed, s.replicas[ri]);
  const RandomStream zs(seed, Purpose::field_z);
  std::vector<double> x_inf(nd);
  sample_uniform_sphere(seed, 0, s.n, d, x_inf.data());
  std::vector<std::vector<double>> x(J, x_inf);
  std::vector<std::unique_ptr<Attention>> attention;
  for (std::size_t j = 0; j <= J; ++j) attention.push_back(replica_attention(s));
  std::vector<double> sup(J, 0.0);
  // G = root Z + b_W with root = C^{1/2} of the covariance C of the field on the current tokens.
  auto noise_substep = [&](std::vector<double>& y) {
    symmetric_sqrt(n, cov.data(), root.data());
    gemm_nn(n, d, n, 1.0, root.data(), n, z.data(), d, 0.0, g.data(), d);
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < d; ++a) y[i * d + a] += h * (g[i * d + a] + bias[a]);
    normalize_rows(y.data(), s.n, d);
  };
  for (std::int64_t l = 0; l < study.layers; ++l) {
    // The common Gaussian draws of this layer: Z [N, d] (token i: index i) and b_W (index N).
    for (int i = 0; i < n; ++i) zs.normals(l, i, z.data() + i * d, d);
    zs.normals(l, n, bias.data(), d);
    for (double& b : bias) b *= kernel.sigma_w;
    // Limit system: K0_ij = kappa(<Y_i, Y_j>) - sigma_W^2.
    attention_substep(attention[J].get(), s.factor * dt, x_inf, buffer, s.n, d);
    gemm_nt(n, n, d, 1.0, x_inf.data(), d, x_inf.data(), d, 0.0, gram.data(), n);
    for (std::size_t k = 0; k < cov.size(); ++k) cov[k] = kappa(gram[k]) - sw2;
    noise_substep(x_inf);
    for (std::size_t j = 0; j < J; ++j) {
      // Width m: Sigma_hat_ij = (1/m) <a_i, a_j>, a_i = sigma(U Y_i / sqrt d + b_U), U and b_U fresh per layer.
      const int m = static_cast<int>(study.widths[j]);
      attention_substep(attention[j].get(), s.factor * dt, x[j], buffer, s.n, d);
      // Streams of their own per width (keyed by m, not by the level's position in this run), so a
      // sweep task holding one width draws exactly what the full study draws for it.
      const std::uint64_t width_seed = replica_seed(seed, m);
      const RandomStream us(width_seed, Purpose::mlp_u), bs(width_seed, Purpose::mlp_bias_u);
      std::vector<double> u(static_cast<std::size_t>(m) * d), bu(m);
      for (int r = 0; r < m; ++r) {
        us.normals(l, r, u.data() + r * d, d);
        bu[r] = kernel.sigma_u * bs.normal4(l, r, 0)[0];
      }
      hidden.resize(static_cast<std::size_t>(n) * m);
      gemm_nt(n, m, d, in, x[j].data(), d, u.data(), d, 0.0, hidden.data(), m);
      for (int i = 0; i < n; ++i) kernel.act->row(&hidden[static_cast<std::size_t>(i) * m], bu.data(), m);
      gemm_nt(n, n, m, 1.0 / m, hidden.data(), m, hidden.data(), m, 0.0, cov.data(), n);
      noise_substep(x[j]);
      sup[j] = std::max(sup[j], mean_square_distance(x[j], x_inf, s.n));
    }
  }
  for (std::size_t j = 0; j < J; ++j) {
    row[j] = row[J + j] = sup[j];
    row[2 * J + j] = mean_square_distance(x[j], x_inf, s.n);
  }
}

ConvergenceResult run_width_study(MPI_Comm comm, const ConvergenceSetup& setup, const WidthStudy& study) {
  return every_replica<WidthReplicas>(comm, setup, study);
}

}  // namespace tokdyn
