// The initial law, the list of mean-field solvers, and what they need.
#include "tokdyn/meanfield/meanfield.hpp"

#include <cmath>
#include <limits>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/sphere/sphere.hpp"
#include "tokdyn/meanfield/circle_grid.hpp"
#include "tokdyn/meanfield/quadrature.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/run/memory.hpp"

namespace tokdyn {
namespace {

std::unique_ptr<MeanFieldSolver> make_grid(const MeanFieldSetup& s) {
  const MeanFieldSpec& m = s.spec;
  if (m.d != 2) throw InputError("meanfield.solver = grid needs model.d = 2 (the circle)");
  CircleGridParams p;
  p.cells = m.cells;
  p.steps = m.layers;
  p.horizon = m.horizon;
  p.factor = m.attention.step_factor();
  const AttentionTraits& traits = attention_styles().traits(m.attention.style);
  if (p.factor != 0 && !traits.exponential)
    throw InputError("meanfield.solver = grid has the kernels e^{b cos} of SA and USA only: attention.style = '" +
                     m.attention.style + "' is neither (use meanfield.solver = quadrature)");
  p.normalized = traits.normalized;
  const ScalarAttention scalar =
      scalar_attention(make_attention_weights(m.attention.weights, 2, s.comm), "meanfield.solver = grid");
  p.beta = scalar.b;
  p.value = scalar.v;
  p.cfl = m.cfl;
  p.max_refinement = m.max_refinement;
  p.seed = m.seed;
  std::unique_ptr<GaussianField> field;
  if (m.noise) field = make_field(m.field);
  return std::make_unique<CircleGridSolver>(s.comm, p, std::move(field), m.density);
}

std::unique_ptr<MeanFieldSolver> make_quadrature(const MeanFieldSetup& s) {
  const MeanFieldSpec& m = s.spec;
  int rank = 0, ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(s.comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Comm_size(s.comm, &ranks));
  std::vector<double> x, masses;
  quadrature_rule(m.density, m.d, Partition(m.points, ranks), rank, x, masses);
  return std::make_unique<QuadratureSolver>(s.comm, mckean_vlasov_setup(s, m.points), m.refinement, std::move(x),
                                            std::move(masses), m.tile);
}

}  // namespace

double InitialDensity::relative(double x1) const {
  if (kind == "von-mises") return std::exp(concentration * (x1 - 1.0));  // e^{c x_1} / e^c: at most 1
  return 1.0 + amplitude * x1;
}

double InitialDensity::max_relative() const { return kind == "von-mises" ? 1.0 : 1.0 + amplitude; }

void sample_initial_density(const InitialDensity& initial, std::uint64_t seed, int d, std::int64_t begin,
                            std::int64_t count, double* x) {
  const RandomStream stream(seed, Purpose::initial_density);
  constexpr std::uint64_t kAcceptBlock = std::uint64_t(1) << 32;  // beyond the blocks of the d normals
  const double bound = initial.max_relative();
  for (std::int64_t i = 0; i < count; ++i) {
    double* xi = x + i * d;
    const auto index = static_cast<std::uint64_t>(begin + i);
    for (std::uint64_t attempt = 0;; ++attempt) {
      stream.normals(attempt, index, xi, static_cast<std::size_t>(d));
      normalize_rows(xi, 1, d);  // uniform on the sphere
      if (stream.uniform4(attempt, index, kAcceptBlock)[0] * bound <= initial.relative(xi[0])) break;
    }
  }
}

const MeanFieldRegistry& meanfield_solvers() {
  static const MeanFieldRegistry registry = [] {
    MeanFieldRegistry r("mean-field solver");
    r.add("quadrature", "Lagrangian weighted points on any S^{d-1}: McKean-Vlasov particles, weighted attention",
          make_quadrature);
    r.add("grid", "Eulerian finite volumes on the circle (d = 2): PETSc DMDA, FFT attention, stochastic Heun", make_grid);
    return r;
  }();
  return registry;
}

void meanfield_memory(MemoryEstimate& memory, const MeanFieldSpec& spec, int ranks) {
  if (spec.solver == "grid") {
    const double cells = static_cast<double>(spec.cells) / ranks + 4;
    memory.add("grid: densities, fluxes and velocities [M/P] x 12", 12 * cells);
    memory.add("grid: the noise modes on the cells", cells * 64);
    return;
  }
  const double points = static_cast<double>(spec.points) / ranks + 1;
  memory.add("points and step buffers [M/P, d] x 8", 8 * points * spec.d);
  memory.add("ring blocks [M/P, 2d + 1] x 3", 3 * points * (2.0 * spec.d + 1));
  field_memory(memory, spec.field, static_cast<std::int64_t>(points), spec.d);
}

SdeSetup mckean_vlasov_setup(const MeanFieldSetup& s, std::int64_t n, const std::string& attention_style) {
  const MeanFieldSpec& m = s.spec;
  int ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_size(s.comm, &ranks));
  SdeSetup setup;
  SdeParams& p = setup.params;
  p.n = n;
  p.d = m.d;
  p.steps = m.layers << m.refinement;
  p.horizon = m.horizon;
  p.factor = m.attention.step_factor();
  p.project = true;  // the points stay on the sphere, as the grid's density does by construction
  p.noise = m.noise;
  setup.seed = m.seed;
  setup.attention = make_attention(m.attention, s.comm, Partition(n, ranks), p.d, m.tile, attention_style);
  if (p.noise) setup.field = make_field(m.field);
  return setup;
}

}  // namespace tokdyn
