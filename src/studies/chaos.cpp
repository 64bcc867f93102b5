#include "tokdyn/studies/chaos.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/diagnostics/measure_distance.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/meanfield/quadrature.hpp"

namespace tokdyn {
namespace {

std::vector<double> angles_of(const std::vector<double>& points) {  // points [n, 2] -> [n]
  std::vector<double> a(points.size() / 2);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::atan2(points[2 * i + 1], points[2 * i]);
  return a;
}

// The N-token system of one replica and level: iid tokens from mu_0, equal masses, the McKean-Vlasov
// scheme of the reference (same deck, same noise seed): it differs from the reference only by mu^N_0 (and
// by the attention style when converge.particle_style names one: exact ring attention for the tokens
// against a Fourier-summed reference, equal to round-off).
std::unique_ptr<QuadratureSolver> particle_system(const Comm& comm, const ChaosStudy& study, std::uint64_t noise_seed,
                                                  std::uint64_t token_seed, std::int64_t n) {
  MeanFieldSetup s{study.reference, comm.get()};
  s.spec.seed = noise_seed;
  const int d = s.spec.d;
  const Partition part(n, comm.size());
  const std::int64_t count = part.count(comm.rank());
  std::vector<double> x(count * d), masses(count, 1.0 / static_cast<double>(n));
  sample_initial_density(s.spec.density, token_seed, d, part.begin(comm.rank()), count, x.data());
  return std::make_unique<QuadratureSolver>(comm.get(), mckean_vlasov_setup(s, n, study.particle_style),
                                            s.spec.refinement, std::move(x), std::move(masses), s.spec.tile);
}

}  // namespace

double chaos_bound_slope(int d) { return d <= 4 ? -0.5 : -2.0 / d; }

double chaos_sharp_slope(int d) {
  const int k = d - 1;  // dimension of the sphere
  return k <= 2 ? -1.0 : -2.0 / k;
}

std::string chaos_distance(const MeanFieldSpec& reference, const std::string& asked, std::int64_t assignment_max,
                           const std::vector<std::int64_t>& sizes) {
  const int d = reference.d;
  if (asked == "circular" && d != 2) throw InputError("converge.distance = circular needs model.d = 2");
  if (asked != "auto") return asked;
  if (d == 2) return "circular";
  // Equal reference masses: a uniform mu_0 (or zero amplitude) and quadrature points.
  const InitialDensity& mu0 = reference.density;
  const bool uniform = (mu0.kind == "cosine" && mu0.amplitude == 0) || (mu0.kind == "von-mises" && mu0.concentration == 0);
  const std::int64_t m = reference.points;
  bool divides = true;
  for (std::int64_t n : sizes) divides = divides && (m % n == 0 || n % m == 0);
  const bool small = std::max(m, sizes.empty() ? 0 : sizes.back()) <= assignment_max;
  return uniform && divides && small && reference.solver == "quadrature" ? "assignment" : "sliced";
}

namespace {
std::vector<double> sample_times(const MeanFieldSpec& m, std::int64_t every) {
  const std::int64_t layers = m.layers;
  const double horizon = m.horizon;
  std::vector<double> times;
  for (std::int64_t l = 0; l <= layers; ++l)
    if (l % every == 0 || l == layers) times.push_back(horizon * static_cast<double>(l) / layers);
  return times;
}
}  // namespace

ChaosReplicas::ChaosReplicas(const Comm& comm, const ChaosStudy& study)
    : ReplicaStudy(comm, static_cast<std::int64_t>(study.replicas.size()),
                   4 * study.sizes.size() * sample_times(study.reference, study.every).size(), true),
      study_(study), times_(sample_times(study.reference, study.every)) {
  if (study.distance == "assignment" && study.reference.solver != "quadrature")
    throw InputError("converge.distance = assignment needs meanfield.solver = quadrature");
  // The MMD of e^{beta <x, y>} is formed relative to e^beta (diagnostics/measure_distance), for beta <= 700:
  // said here, before any work, rather than by the rank of the first level's distances.
  if (!(study.beta >= 0 && study.beta <= 700))
    throw InputError("converge.study = tokens: the MMD of the kernel e^{beta <x, y>} needs attention.beta in [0, 700], "
                     "not " + std::to_string(study.beta));
}

std::string ChaosReplicas::nonfinite_message(std::int64_t) const {
  return "NaN or Inf in the mean-field reference or a distance (increase model.L or reduce attention.beta)";
}

void ChaosReplicas::compute(std::int64_t r, double* row) {
  const ChaosStudy& study = study_;
  const Comm& comm = this->comm();
  const int d = study.reference.d;
  const std::int64_t layers = study.reference.layers;
  const std::size_t J = study.sizes.size(), S = times_.size();
  // Replica r's noise path: the run's seed (the reference spec's) and the replica id.
  const std::uint64_t noise_seed = replica_seed(study.reference.seed, study.replicas[r]);
  MeanFieldSetup ms{study.reference, comm.get()};
  ms.spec.seed = noise_seed;
  auto reference = meanfield_solvers().make(ms.spec.solver, ms);
  std::vector<std::unique_ptr<QuadratureSolver>> particles;
  for (std::size_t j = 0; j < J; ++j)  // levels draw independent tokens
    particles.push_back(particle_system(comm, study, noise_seed, replica_seed(noise_seed, static_cast<std::int64_t>(j)),
                                        study.sizes[j]));
  std::size_t sample = 0;
  auto measure = [&](std::int64_t layer) {
    if (!(layer % study.every == 0 || layer == layers)) return;
    const MeanFieldObservables ref = reference->observe(study.beta);
    std::vector<double> y, wy;
    reference->gather_measure(y, wy);
    const std::vector<double> ref_angles = d == 2 ? angles_of(y) : std::vector<double>();
    // [J, 4]: W2^2, MMD^2, errors of E_beta and of the mean; level j is computed by rank j mod P alone and
    // the sum over ranks assembles the table (exactly: each entry has one non-zero term).
    std::vector<double> table(J * 4, 0.0);
    // A distance refuses what it cannot measure (NaN in a level's tokens) on the level's rank alone: the
    // ranks agree on it before the sum, so that none is left waiting there.
    std::string problem;
    for (std::size_t j = 0; j < J; ++j) {
      const MeanFieldObservables o = particles[j]->observe(study.beta);  // collective
      std::vector<double> x, wx;
      particles[j]->gather_measure(x, wx);
      if (static_cast<int>(j % comm.size()) != comm.rank() || !problem.empty()) continue;
      try {
        double w2 = 0, mmd2 = 0, mean_err = 0;
        if (d == 2) {
          const std::vector<double> a = angles_of(x);
          w2 = reference->piecewise_constant() ? circular_w2_density(wy, a, {}) : circular_w2(a, {}, ref_angles, wy);
          mmd2 = mmd_squared_circle(a, {}, ref_angles, wy, study.beta);
        } else {
          w2 = study.distance == "assignment" ? assignment_w2(x, y, d, SphereCost::geodesic)
                                              : sliced_w2(x, {}, y, wy, d, study.sliced_directions, noise_seed);
          // O(N M) with the energies of the pair passes, not O((N + M)^2).
          mmd2 = mmd_squared_from_energies(x, {}, y, wy, d, study.beta, o.energy, ref.energy);
        }
        for (int a = 0; a < d; ++a) mean_err += (o.mean[a] - ref.mean[a]) * (o.mean[a] - ref.mean[a]);
        table[4 * j] = w2 * w2;
        table[4 * j + 1] = mmd2;
        table[4 * j + 2] = std::abs(o.energy - ref.energy);
        table[4 * j + 3] = std::sqrt(mean_err);
      } catch (const InputError& e) {
        problem = "replica " + std::to_string(study.replicas[r]) + ", N = " + std::to_string(study.sizes[j]) + ": " +
                  e.what();
      }
    }
    require_all(comm.get(), problem.empty(), problem);
    TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, table.data(), static_cast<int>(table.size()), MPI_DOUBLE, MPI_SUM,
                                   comm.get()));
    for (std::size_t j = 0; j < J; ++j)
      for (int q = 0; q < 4; ++q) row[(q * J + j) * S + sample] = table[4 * j + q];
    ++sample;
  };
  measure(0);
  for (std::int64_t l = 0; l < layers; ++l) {
    reference->step(l);
    for (auto& p : particles) p->step(l);
    // A reference that blew up makes NaN distances: the replica's row says so and the run stops.
    if (!reference->finite()) {
      for (std::size_t k = 0; k < width(); ++k) row[k] = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    measure(l + 1);
  }
}

ChaosResult ChaosReplicas::result() const {
  ChaosResult out;
  out.times = times_;
  const std::size_t J = study_.sizes.size(), S = times_.size(), R = study_.replicas.size();
  std::vector<double>* q[4] = {&out.w2, &out.mmd2, &out.energy_error, &out.mean_error};
  for (std::size_t i = 0; i < R; ++i)
    for (int k = 0; k < 4; ++k) {
      const double* block = rows().data() + i * width() + k * J * S;  // [J, S]
      q[k]->insert(q[k]->end(), block, block + J * S);
    }
  return out;
}

ChaosResult run_chaos_study(const Comm& comm, const ChaosStudy& study) {
  ChaosReplicas replicas(comm, study);
  run_replicas(replicas);
  return replicas.result();
}

}  // namespace tokdyn
