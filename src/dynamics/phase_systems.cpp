#include "tokdyn/dynamics/phase_systems.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/dot.hpp"
#include "tokdyn/core/numerics/fast_exp.hpp"
#include "tokdyn/core/numerics/lapack.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"
#include "tokdyn/io/checkpoint.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/pairs/softmax_kernels.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

double phase_step(const PhaseParams& p, double beta) {
  if (p.softmax || p.raw_step) return p.step;
  // USA's weights reach e^beta: the peers' rule keeps a step's move below about step radians.
  return p.step / std::max(std::sqrt(beta) * std::exp(beta - 0.5), 1.0);
}

std::int64_t phase_steps_per_record(const PhaseParams& p, double beta) {
  const double interval = p.horizon / static_cast<double>(p.records);
  // 1e-12 below the quotient: 0.3 / 0.1 = 3.0000000000000004 is 3 steps, not 4.
  const double m = std::ceil(interval / phase_step(p, beta) * (1 - 1e-12));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(m));
}

void phase_matrices(const PhaseParams& p, std::uint64_t draw, std::uint64_t key, double* bilinear, double* value) {
  const int d = p.d;
  const std::size_t dd = static_cast<std::size_t>(d) * d;
  std::vector<double> g(2 * dd);
  const RandomStream forms(p.seed, Purpose::phase_bilinear), values(p.seed, Purpose::phase_value);
  // B = K^T Q: I; G1 G2 / sqrt(d) (a Gaussian product); (G + G^T) / sqrt(2) (GOE).
  double norm_v = 1;  // the scale of V = +-B / norm_v
  std::fill(bilinear, bilinear + dd, 0.0);
  if (p.bilinear == "identity") {
    for (int a = 0; a < d; ++a) bilinear[a * d + a] = 1;
  } else {
    for (int a = 0; a < 2 * d; ++a) forms.normals(draw, key * 2 * d + a, g.data() + a * d, d);
    if (p.bilinear == "gaussian") {
      for (int a = 0; a < d; ++a)
        for (int c = 0; c < d; ++c) {
          double s = 0;
          for (int k = 0; k < d; ++k) s += g[a * d + k] * g[dd + k * d + c];
          bilinear[a * d + c] = s / std::sqrt(static_cast<double>(d));
        }
      norm_v = std::sqrt(static_cast<double>(d));
    } else {
      for (int a = 0; a < d; ++a)
        for (int c = 0; c < d; ++c) bilinear[a * d + c] = (g[a * d + c] + g[c * d + a]) / std::sqrt(2.0);
      norm_v = std::sqrt(d + 1.0);
    }
  }
  // V: I; G G^T / sqrt(d) (Gaussian, positive semi-definite); +-B / norm_v.
  std::fill(value, value + dd, 0.0);
  if (p.value == "identity") {
    for (int a = 0; a < d; ++a) value[a * d + a] = 1;
  } else if (p.value == "gaussian") {
    for (int a = 0; a < d; ++a) values.normals(draw, key * d + a, g.data() + a * d, d);
    for (int a = 0; a < d; ++a)
      for (int c = 0; c < d; ++c) {
        double s = 0;
        for (int k = 0; k < d; ++k) s += g[a * d + k] * g[c * d + k];
        value[a * d + c] = s / std::sqrt(static_cast<double>(d));
      }
  } else {
    const double sign = p.value == "plus-b" ? 1.0 : -1.0;
    for (std::size_t k = 0; k < dd; ++k) value[k] = sign * bilinear[k] / norm_v;
  }
}

namespace {

// s [n] = scale y . x_j over the tokens by coordinate, xt [d, n] (the logits of a row, or its cosines).
TOKDYN_VECTOR_CLONES void row_scores(const double* y, const double* xt, int d, std::int64_t n, double scale, double* s) {
  for (std::int64_t j = 0; j < n; ++j) s[j] = 0;
  for (int a = 0; a < d; ++a) {
    const double ya = scale * y[a];
    const double* xa = xt + a * n;
    for (std::int64_t j = 0; j < n; ++j) s[j] += ya * xa[j];
  }
}

// w [n] = e^{s_j - max s} and their sum, s_j = beta y . x_j with the tokens by coordinate, xt [d, n]; the maximum
// in *top. The softmax row kernels of pairs/ do the maximum and the exponentials.
double row_weights(const double* y, const double* xt, int d, std::int64_t n, double beta, double* w, double* top) {
  row_scores(y, xt, d, n, beta, w);
  *top = row_max(w, static_cast<int>(n));
  return shifted_exp_sum(w, static_cast<int>(n), *top);
}

// sum_j -expm1(beta (c_j - 1)) = sum_j (1 - e^{-beta |x_i - x_j|^2 / 2}) for unit tokens: E_beta's row. In a vector
// clone, so the exponential's fma is an instruction, not a call into libm.
TOKDYN_VECTOR_CLONES double row_energy(const double* c, std::int64_t n, double beta) {
  return lane_sum(static_cast<std::size_t>(n), [c, beta](std::size_t j) { return -expm1_nonpositive(beta * (c[j] - 1)); });
}

void transpose(const double* x, std::int64_t n, int d, double* xt) {
  for (std::int64_t j = 0; j < n; ++j)
    for (int a = 0; a < d; ++a) xt[a * n + j] = x[j * d + a];
}

// rows [count, width] of every rank, gathered on every rank in the order of the partition.
std::vector<double> allgather_rows(const Comm& comm, const std::vector<double>& local, const Partition& partition,
                                   int width) {
  std::vector<int> counts(comm.size()), offsets(comm.size());
  for (int r = 0; r < comm.size(); ++r) {
    counts[r] = static_cast<int>(partition.count(r) * width);
    offsets[r] = static_cast<int>(partition.begin(r) * width);
  }
  std::vector<double> all(static_cast<std::size_t>(partition.n_global) * width);
  TOKDYN_MPI_CHECK(MPI_Allgatherv(local.data(), counts[comm.rank()], MPI_DOUBLE, all.data(), counts.data(),
                                  offsets.data(), MPI_DOUBLE, comm.get()));
  return all;
}

int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];  // path halving
  return i;
}

}  // namespace

void phase_system_step(const PhaseParams& p, double beta, double h, const double* b, const double* v, double* x,
                       std::vector<double>& work) {
  const std::int64_t n = p.tokens;
  const int d = p.d;
  work.resize(static_cast<std::size_t>(n) * (2 * d + 1) + 2 * d);
  double* xt = work.data();    // [d, n]
  double* out = xt + n * d;    // [n, d]: h (A x)_i V
  double* w = out + n * d;     // [n]
  double* y = w + n;           // [d]: x_i B
  double* z = y + d;           // [d]: (A x)_i
  transpose(x, n, d, xt);
  for (std::int64_t i = 0; i < n; ++i) {
    const double* xi = x + i * d;
    for (int a = 0; a < d; ++a) {
      double s = 0;
      if (b)
        for (int c = 0; c < d; ++c) s += xi[c] * b[c * d + a];
      y[a] = b ? s : xi[a];
    }
    double top;
    const double sum = row_weights(y, xt, d, n, beta, w, &top);
    // SA: sum_j w_j x_j / sum_j w_j; USA: (1/n) sum_j e^{s_j} x_j = (e^top / n) sum_j w_j x_j.
    const double scale = p.softmax ? 1.0 / sum : std::exp(top) / static_cast<double>(n);
    for (int a = 0; a < d; ++a) z[a] = dot(w, xt + a * n, 0, static_cast<std::size_t>(n)) * scale;
    for (int a = 0; a < d; ++a) {
      double s = 0;
      if (v)
        for (int c = 0; c < d; ++c) s += z[c] * v[c * d + a];
      out[i * d + a] = h * (v ? s : z[a]);
    }
  }
  for (std::size_t k = 0; k < static_cast<std::size_t>(n) * d; ++k) x[k] += out[k];
  normalize_rows(x, n, d);
}

void phase_mlp_step(RandomMlp& mlp, std::uint64_t system, std::int64_t layer, double h, double* x, std::int64_t n,
                    int d, std::vector<double>& g) {
  g.resize(static_cast<std::size_t>(n) * d);
  mlp.draw(layer, system);
  mlp.apply(x, n, g.data());
  const double scale = std::sqrt(h);  // the noise's sqrt(dt), as in the transformer's layer
  for (std::size_t k = 0; k < g.size(); ++k) x[k] += scale * g[k];
  normalize_rows(x, n, d);
}

SystemStatistics phase_system_statistics(const PhaseParams& p, double beta, const double* x, std::vector<double>& work,
                                         std::vector<int>& parent) {
  const std::int64_t n = p.tokens;
  const int d = p.d;
  work.resize(static_cast<std::size_t>(n) * (d + 1) + 2 * static_cast<std::size_t>(d) * d + d);
  double* xt = work.data();   // [d, n]
  double* c = xt + n * d;     // [n]
  double* gram = c + n;       // [d, d]: X^T X
  double* vectors = gram + d * d;
  double* eig = vectors + d * d;
  transpose(x, n, d, xt);
  parent.resize(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::int64_t close = 0;
  double energy = 0;  // sum_ij -expm1(beta (c_ij - 1)) = sum_ij (1 - e^{-beta |x_i - x_j|^2 / 2}), unit tokens
  for (std::int64_t i = 0; i < n; ++i) {
    row_scores(x + i * d, xt, d, n, 1.0, c);  // cosines
    energy += row_energy(c, n, beta);
    for (std::int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      close += c[j] > p.density_cosine;
      if (j > i && c[j] > p.cluster_cosine) {
        const int ri = find_root(parent, static_cast<int>(i)), rj = find_root(parent, static_cast<int>(j));
        if (ri != rj) parent[std::max(ri, rj)] = std::min(ri, rj);
      }
    }
  }
  SystemStatistics s;
  const double nn = static_cast<double>(n);
  s.density = n > 1 ? static_cast<double>(close) / (nn * (nn - 1)) : 0.0;
  for (std::int64_t i = 0; i < n; ++i) s.clusters += find_root(parent, static_cast<int>(i)) == i;
  // The span of the tokens: the nonzero eigenvalues of X X^T [n, n] are those of X^T X [d, d].
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) gram[a * d + b] = dot(xt + a * n, xt + b * n, 0, static_cast<std::size_t>(n));
  symmetric_eigensolve(d, gram, eig, vectors);
  for (int a = 0; a < d; ++a) s.span += eig[a] > p.span_eigenvalue;
  s.energy = std::exp(beta) / (2 * nn * nn) * energy;
  return s;
}

PhaseSystems::PhaseSystems(const Comm& comm, const PhaseParams& params)
    : comm_(comm), params_(params),
      partition_(static_cast<std::int64_t>(params.betas.size()) * params.systems, comm.size()),
      x_(static_cast<std::size_t>(partition_.count(comm.rank())) * params.tokens * params.d) {}

void PhaseSystems::start() {
  // Each system's tokens from its own stream counter (system, token): the same at any rank count.
  const std::int64_t first = partition_.begin(comm_.rank()), count = partition_.count(comm_.rank());
  const RandomStream stream(params_.seed, Purpose::phase_tokens);
  const int d = params_.d;
  for (std::int64_t s = 0; s < count; ++s)
    for (std::int64_t i = 0; i < params_.tokens; ++i)
      stream.normals(grid_system(first + s), static_cast<std::uint64_t>(i),
                     x_.data() + (s * params_.tokens + i) * d, d);
  normalize_rows(x_.data(), count * params_.tokens, d);
}

void PhaseSystems::begin(RunFile& file) {
  RunGroup g = file.group("phase");
  g.write("beta", params_.betas);
  std::vector<double> index(params_.betas.size());
  for (std::size_t b = 0; b < index.size(); ++b) index[b] = static_cast<double>(params_.beta_offset) + static_cast<double>(b);
  g.write("beta_index", index);
  std::vector<double> steps, sizes;
  for (double beta : params_.betas) {
    const std::int64_t m = phase_steps_per_record(params_, beta);
    steps.push_back(static_cast<double>(m));
    sizes.push_back(params_.horizon / static_cast<double>(params_.records) / static_cast<double>(m));
  }
  g.write("step", sizes);
  g.write("steps_per_record", steps);
  observe(0, file);  // the initial tokens (uniform draws: finite)
}

std::uint64_t PhaseSystems::draw_at(double t) const {
  return params_.regen_period > 0 ? static_cast<std::uint64_t>(std::floor(t / params_.regen_period)) : 0;
}

void PhaseSystems::matrices_at(std::int64_t g, std::uint64_t draw, std::vector<double>& b, std::vector<double>& v) const {
  const std::int64_t beta_index = g / params_.systems;
  const std::uint64_t key = params_.scope == "system" ? grid_system(g)
                            : params_.scope == "beta" ? static_cast<std::uint64_t>(params_.beta_offset + beta_index)
                                                      : 0;
  b.resize(static_cast<std::size_t>(params_.d) * params_.d);
  v.resize(b.size());
  phase_matrices(params_, draw, key, b.data(), v.data());
}

std::int64_t PhaseSystems::advance(std::int64_t record) {
  const std::int64_t first = partition_.begin(comm_.rank()), count = partition_.count(comm_.rank());
  const std::size_t size = static_cast<std::size_t>(params_.tokens) * params_.d;
  const bool identities = params_.bilinear == "identity" && params_.value == "identity";
  const double interval = params_.horizon / static_cast<double>(params_.records);
  std::vector<double> work, b, v, noise;
  std::optional<RandomMlp> mlp;
  if (params_.mlp) mlp.emplace(params_.mlp_params, params_.d);
  for (std::int64_t s = 0; s < count; ++s) {
    const std::int64_t g = first + s;
    const double beta = params_.betas[g / params_.systems];
    const std::int64_t m = phase_steps_per_record(params_, beta);
    const double h = interval / static_cast<double>(m);
    std::uint64_t drawn = 0;
    bool have = false;
    for (std::int64_t k = 0; k < m; ++k) {
      // A system's B and V change only with the draw (d^3 work each, more than a step's n^2 d at small n).
      const std::uint64_t draw = draw_at(static_cast<double>(record * m + k) * h);
      if (!identities && (!have || draw != drawn)) matrices_at(g, draw, b, v), drawn = draw, have = true;
      phase_system_step(params_, beta, h, identities ? nullptr : b.data(), identities ? nullptr : v.data(),
                        x_.data() + s * size, work);
      if (mlp) phase_mlp_step(*mlp, grid_system(g), record * m + k + 1, h, x_.data() + s * size, params_.tokens,
                              params_.d, noise);
    }
  }
  return record + 1;
}

PhaseRecord PhaseSystems::gather_statistics() {
  constexpr int kValues = 4;  // density, clusters, span, energy
  const std::int64_t count = partition_.count(comm_.rank()), first = partition_.begin(comm_.rank());
  const std::size_t size = static_cast<std::size_t>(params_.tokens) * params_.d;
  std::vector<double> local(static_cast<std::size_t>(count) * kValues), work;
  std::vector<int> parent;
  for (std::int64_t s = 0; s < count; ++s) {
    const double beta = params_.betas[(first + s) / params_.systems];
    const SystemStatistics st = phase_system_statistics(params_, beta, x_.data() + s * size, work, parent);
    double* row = local.data() + s * kValues;
    row[0] = st.density, row[1] = st.clusters, row[2] = st.span, row[3] = st.energy;
  }
  // Every system's values on every rank, in global order: the sums below do not depend on the ranks.
  const std::vector<double> all = allgather_rows(comm_, local, partition_, kValues);
  const std::int64_t S = params_.systems;
  PhaseRecord r;
  std::vector<double> clusters(S);
  for (std::size_t b = 0; b < params_.betas.size(); ++b) {
    const double* rows = all.data() + b * S * kValues;
    auto mean_and_error = [&](int k, double& mean, double* error) {
      double sum = 0, sq = 0;
      for (std::int64_t s = 0; s < S; ++s) sum += rows[s * kValues + k];
      mean = sum / static_cast<double>(S);
      for (std::int64_t s = 0; s < S; ++s) sq += (rows[s * kValues + k] - mean) * (rows[s * kValues + k] - mean);
      if (error) *error = S > 1 ? std::sqrt(sq / static_cast<double>(S - 1) / static_cast<double>(S)) : NAN;
    };
    double m, e;
    mean_and_error(0, m, &e), r.density.push_back(m), r.density_stderr.push_back(e);
    mean_and_error(1, m, nullptr), r.clusters_mean.push_back(m);
    mean_and_error(2, m, nullptr), r.span.push_back(m);
    mean_and_error(3, m, &e), r.energy.push_back(m), r.energy_stderr.push_back(e);
    for (std::int64_t s = 0; s < S; ++s) clusters[s] = rows[s * kValues + 1];
    std::sort(clusters.begin(), clusters.end());
    r.clusters_median.push_back(S % 2 ? clusters[S / 2] : 0.5 * (clusters[S / 2 - 1] + clusters[S / 2]));
  }
  return r;
}

std::string PhaseSystems::observe(std::int64_t record, RunFile& file) {
  last_ = gather_statistics();
  RunGroup g = file.group("phase");
  const hsize_t B = params_.betas.size(), mine = comm_.rank() == 0 ? B : 0;
  const std::pair<const char*, const std::vector<double>*> series[] = {
      {"density", &last_.density},           {"density_stderr", &last_.density_stderr},
      {"clusters_median", &last_.clusters_median}, {"clusters_mean", &last_.clusters_mean},
      {"span_dimension", &last_.span},       {"energy", &last_.energy},
      {"energy_stderr", &last_.energy_stderr}};
  for (const auto& [name, values] : series) g.write_row(name, {B}, record, values->data(), 0, mine);
  const double t = params_.horizon * static_cast<double>(record) / static_cast<double>(params_.records);
  g.write_row("time", {}, record, &t, 0, comm_.rank() == 0 ? 1 : 0);
  const std::size_t lo = 0, hi = B - 1;
  char line[320];
  std::snprintf(line, sizeof line,
                "record %lld/%lld: t = %.4g; beta %.3g: density at zero %.4f, median clusters %.1f; beta %.3g: %.4f, "
                "%.1f", static_cast<long long>(record), static_cast<long long>(params_.records), t,
                params_.betas[lo], last_.density[lo], last_.clusters_median[lo], params_.betas[hi], last_.density[hi],
                last_.clusters_median[hi]);
  line_ = line;
  if (record == params_.records) summary_ = {line_};
  for (std::size_t b = 0; b < B; ++b)
    if (!std::isfinite(last_.energy[b]) || !std::isfinite(last_.density[b]))
      return "E_beta or the density at zero is NaN or Inf at beta = " + std::to_string(params_.betas[b]) +
             " after record " + std::to_string(record);
  return "";
}

bool PhaseSystems::finite() const {
  for (double v : x_)
    if (!std::isfinite(v)) return false;
  return true;
}

std::string PhaseSystems::nonfinite_message(std::int64_t record) const {
  return "NaN or Inf in the tokens after record " + std::to_string(record) +
         " (phase.step too large for the largest beta, or USA with phase.raw_step)";
}

void PhaseSystems::save(CheckpointWriter& out) const {
  out.rows("X", x_.data(), partition_, static_cast<int>(params_.tokens * params_.d));
}

void PhaseSystems::restore(const CheckpointReader& in, RunFile&) {
  in.rows("X", x_.data(), partition_, static_cast<int>(params_.tokens * params_.d));
}

double PhaseSystems::work_per_step() const {
  double pairs = 0;
  const double n = static_cast<double>(params_.tokens);
  for (double beta : params_.betas)
    pairs += static_cast<double>(params_.systems) * static_cast<double>(phase_steps_per_record(params_, beta)) * n * n;
  return pairs;
}

}  // namespace tokdyn
