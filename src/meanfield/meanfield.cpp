// The [meanfield] deck keys, the initial law, and the list of mean-field solvers.
#include "tokdyn/meanfield/meanfield.hpp"

#include <cmath>
#include <limits>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/deck.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/partition.hpp"
#include "tokdyn/core/random.hpp"
#include "tokdyn/sphere/sphere.hpp"
#include "tokdyn/meanfield/circle_grid.hpp"
#include "tokdyn/meanfield/quadrature.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/run/memory.hpp"

namespace tokdyn {
namespace {

std::unique_ptr<MeanFieldSolver> make_grid(const MeanFieldSetup& s) {
  const Deck& deck = *s.deck;
  if (deck.get_int("model.d") != 2) throw InputError("meanfield.solver = grid needs model.d = 2 (the circle)");
  CircleGridParams p;
  p.cells = deck.get_int("meanfield.cells");
  p.steps = deck.get_int("model.L");
  p.horizon = deck.get_real("model.T");
  p.factor = deck.get_bool("attention.enabled") ? deck.get_real("attention.factor") : 0.0;
  const AttentionTraits& traits = attention_styles().traits(deck.get_text("attention.style"));
  if (p.factor != 0 && !traits.exponential)
    throw InputError("meanfield.solver = grid has the kernels e^{b cos} of SA and USA only: attention.style = '" +
                     deck.get_text("attention.style") + "' is neither (use meanfield.solver = quadrature)");
  p.normalized = traits.normalized;
  const ScalarAttention scalar = scalar_attention(attention_weights_from_deck(deck, 2, s.comm), "meanfield.solver = grid");
  p.beta = scalar.b;
  p.value = scalar.v;
  p.cfl = deck.get_real("meanfield.cfl");
  p.max_refinement = static_cast<int>(deck.get_int("meanfield.max_refinement"));
  p.seed = s.seed ? *s.seed : static_cast<std::uint64_t>(deck.get_int("run.seed"));
  std::unique_ptr<GaussianField> field;
  if (deck.get_bool("noise.enabled")) field = field_styles().make(deck.get_text("noise.field"), field_params_from_deck(deck, 2));
  return std::make_unique<CircleGridSolver>(s.comm, p, std::move(field), initial_density_from_deck(deck));
}

std::unique_ptr<MeanFieldSolver> make_quadrature(const MeanFieldSetup& s) {
  const Deck& deck = *s.deck;
  int rank = 0, ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(s.comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Comm_size(s.comm, &ranks));
  const std::int64_t n = deck.get_int("meanfield.points");
  const int d = static_cast<int>(deck.get_int("model.d"));
  std::vector<double> x, masses;
  quadrature_rule(initial_density_from_deck(deck), d, Partition(n, ranks), rank, x, masses);
  return std::make_unique<QuadratureSolver>(s.comm, mckean_vlasov_setup(s, n),
                                            static_cast<int>(deck.get_int("meanfield.refinement")), std::move(x),
                                            std::move(masses), static_cast<int>(deck.get_int("run.tile")));
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

void meanfield_memory(MemoryEstimate& memory, const Deck& deck, int ranks) {
  const int d = static_cast<int>(deck.get_int("model.d"));
  if (deck.get_text("meanfield.solver") == "grid") {
    const double cells = static_cast<double>(deck.get_int("meanfield.cells")) / ranks + 4;
    memory.add("grid: densities, fluxes and velocities [M/P] x 12", 12 * cells);
    memory.add("grid: the noise modes on the cells", cells * 64);
    return;
  }
  const double points = static_cast<double>(deck.get_int("meanfield.points")) / ranks + 1;
  memory.add("points and step buffers [M/P, d] x 8", 8 * points * d);
  memory.add("ring blocks [M/P, 2d + 1] x 3", 3 * points * (2.0 * d + 1));
  field_memory(memory, deck, static_cast<std::int64_t>(points), d);
}

void add_meanfield_keys(DeckSchema& s) {
  s.add_choice("meanfield.solver", "grid", meanfield_solvers().names(), "mean-field solver");
  s.add_int("meanfield.cells", 1024, "grid: cells M of the circle", 8, std::int64_t(1) << 30);
  s.add_real("meanfield.cfl", 0.25, "grid: largest Courant number of a sub-step (<= 0.25 keeps the density positive)",
             0.0, 0.5, true);
  s.add_int("meanfield.max_refinement", 16, "grid: at most 2^r sub-steps per layer", 0, 30);
  s.add_int("meanfield.points", 4096, "quadrature: points M", 1, std::int64_t(1) << 40);
  s.add_int("meanfield.refinement", 0, "quadrature: 2^q Heun steps per layer (on the path of L 2^q steps)", 0, 30);
  s.add_choice("meanfield.density", "cosine", {"cosine", "von-mises"},
               "initial law relative to uniform: cosine 1 + a x_1, von-mises e^{c x_1}");
  s.add_real("meanfield.amplitude", 0.5, "cosine: amplitude a", 0.0, 1.0);
  s.add_real("meanfield.concentration", 1.0, "von-mises: concentration c", 0.0, 700.0);
}

SdeSetup mckean_vlasov_setup(const MeanFieldSetup& s, std::int64_t n, const std::string& attention_style) {
  const Deck& deck = *s.deck;
  int ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_size(s.comm, &ranks));
  SdeSetup setup;
  SdeParams& p = setup.params;
  p.n = n;
  p.d = static_cast<int>(deck.get_int("model.d"));
  p.steps = deck.get_int("model.L") << deck.get_int("meanfield.refinement");
  p.horizon = deck.get_real("model.T");
  p.factor = deck.get_bool("attention.enabled") ? deck.get_real("attention.factor") : 0.0;
  p.project = true;  // the points stay on the sphere, as the grid's density does by construction
  p.noise = deck.get_bool("noise.enabled");
  setup.seed = s.seed ? *s.seed : static_cast<std::uint64_t>(deck.get_int("run.seed"));
  setup.attention = attention_from_deck(deck, s.comm, Partition(n, ranks), p.d, static_cast<int>(deck.get_int("run.tile")),
                                        attention_style);
  if (p.noise) setup.field = field_styles().make(deck.get_text("noise.field"), field_params_from_deck(deck, p.d));
  return setup;
}

InitialDensity initial_density_from_deck(const Deck& deck) {
  InitialDensity d;
  d.kind = deck.get_text("meanfield.density");
  d.amplitude = deck.get_real("meanfield.amplitude");
  d.concentration = deck.get_real("meanfield.concentration");
  return d;
}

}  // namespace tokdyn
