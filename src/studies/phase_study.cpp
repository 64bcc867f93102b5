#include "tokdyn/studies/phase_study.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"

namespace tokdyn {
namespace {

// What /phase holds (io/outputs.hpp): declared here, beside the code that writes it.
constexpr OutputDecl kPhaseOutputs[] = {
    {"phase/beta", OutputType::real, "1", "beta", "The inverse temperatures beta of the diagram (phase.beta_list, or "
                                                  "phase.betas values from phase.beta_min to phase.beta_max)."},
    {"phase/beta_index", OutputType::real, "1", "beta",
     "The index of each beta in the grid of phase.betas values (or phase.beta_list): a block's betas (phase.block) "
     "keep their place in the whole grid, and their draws are keyed by it."},
    {"phase/clusters_mean", OutputType::real, "1", "record, beta",
     "Mean over the systems of the number of clusters: connected components of the graph joining tokens i, j with "
     "<x_i, x_j> > phase.cluster_cosine."},
    {"phase/clusters_median", OutputType::real, "1", "record, beta", "Median over the systems of the number of clusters."},
    {"phase/density", OutputType::real, "1", "record, beta",
     "Density at zero: the fraction of ordered pairs i != j with <x_i, x_j> > phase.density_cosine, averaged over the "
     "systems (equal to the pooled fraction)."},
    {"phase/density_stderr", OutputType::real, "1", "record, beta",
     "Standard error of density over the systems: their sample standard deviation over sqrt(systems)."},
    {"phase/energy", OutputType::real, "1", "record, beta",
     "Mean over the systems of E_beta = (1/(2n^2)) sum_ij (e^beta - e^{beta <x_i, x_j>}) (doc/science.md section 5.1)."},
    {"phase/energy_stderr", OutputType::real, "1", "record, beta", "Standard error of energy over the systems."},
    {"phase/span_dimension", OutputType::real, "1", "record, beta",
     "Mean over the systems of the dimension of the tokens' span: the eigenvalues of X^T X above "
     "phase.span_eigenvalue."},
    {"phase/step", OutputType::real, "model time t", "beta",
     "The time step taken at each beta: the record interval T/records over steps_per_record."},
    {"phase/steps_per_record", OutputType::real, "1", "beta",
     "Steps per record interval at each beta: the interval over the step rule (phase.step, for USA divided by "
     "max(sqrt(beta) e^{beta - 1/2}, 1) unless phase.raw_step), rounded up."},
    {"phase/time", OutputType::real, "model time t", "record", "Record times t_r = r T / phase.records, r = 0.."},
};
const DeclaredOutputs kPhaseDeclared("phase", kPhaseOutputs);

}  // namespace

DeckSchema PhaseStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "phase.h5");
  s.add_int("model.N", 32, "tokens n of each system", 2, 1 << 24);
  s.add_int("model.d", 2, "dimension d", 2, 1 << 12);
  s.add_real("model.T", 30.0, "horizon T", 0.0, std::numeric_limits<double>::infinity(), true);
  s.add_int("phase.systems", 2048, "independent systems per beta", 1, std::int64_t(1) << 32);
  s.add_real("phase.beta_min", 0.1, "smallest beta of the grid", 0.0, 700.0);
  s.add_real("phase.beta_max", 9.0, "largest beta of the grid", 0.0, 700.0);
  s.add_int("phase.betas", 90, "betas, evenly spaced from beta_min to beta_max (beta_max alone when 1)", 1, 1 << 20);
  s.add_text("phase.beta_list", "", "comma-separated betas instead of the grid");
  s.add_int("phase.blocks", 1, "split the betas into this many blocks of consecutive betas (a Slurm array)", 1, 1 << 20);
  s.add_int("phase.block", 0, "the block this run takes, 0 .. phase.blocks - 1: its draws are those of the whole grid",
            0, 1 << 20);
  s.add_int("phase.records", 100, "record times r T / records, r = 0..records", 1, 1 << 24);
  s.add_real("phase.step", 0.1, "time step (the largest; record intervals take whole steps)", 0.0, 10.0, true);
  s.add_choice("phase.attention", "sa", {"sa", "usa"}, "softmax attention (sa) or normalised by n (usa)");
  s.add_bool("phase.raw_step", false, "usa: take phase.step as it is, not divided by max(sqrt(beta) e^{beta-1/2}, 1)");
  s.add_choice("phase.bilinear", "identity", {"identity", "gaussian", "goe"},
               "B = K^T Q: identity, Gaussian product G1 G2 / sqrt(d), or GOE (G + G^T) / sqrt(2)");
  s.add_choice("phase.value", "identity", {"identity", "gaussian", "plus-b", "minus-b"},
               "V: identity, Gaussian G G^T / sqrt(d), or +-B / (1, sqrt(d) or sqrt(d + 1) for identity, gaussian or "
               "goe B)");
  s.add_choice("phase.scope", "system", {"system", "beta", "run"},
               "random B and V: drawn for each system, once per beta, or once per run");
  s.add_real("phase.regen_period", 0.0, "> 0: B and V drawn again every regen_period of time (new layers)", 0.0);
  s.add_real("phase.density_cosine", 0.999, "a pair i != j is at zero distance above this cosine", -1.0, 1.0);
  s.add_real("phase.cluster_cosine", 0.9999, "tokens above this cosine are joined into one cluster", -1.0, 1.0);
  s.add_real("phase.span_eigenvalue", 1e-3, "eigenvalues of X^T X above this count in the span's dimension", 0.0);
  // The random MLP of section 1.2 after every step, off by default here (the published diagrams have no noise).
  s.add_bool("mlp.enabled", false, "apply the random-MLP sub-step after each step, an MLP per system and step");
  s.add_int("mlp.width", 64, "MLP width m", 1, 1 << 24);
  add_kernel_keys(s);
  return s;
}

PhaseStudy::PhaseStudy(const Comm& comm, const Deck& deck) : comm_(comm) {
  PhaseParams& p = params_;
  p.tokens = deck.get_int("model.N");
  p.d = static_cast<int>(deck.get_int("model.d"));
  p.horizon = deck.get_real("model.T");
  p.systems = deck.get_int("phase.systems");
  p.records = deck.get_int("phase.records");
  p.step = deck.get_real("phase.step");
  p.softmax = deck.get_text("phase.attention") == "sa";
  p.raw_step = deck.get_bool("phase.raw_step");
  p.bilinear = deck.get_text("phase.bilinear");
  p.value = deck.get_text("phase.value");
  p.scope = deck.get_text("phase.scope");
  p.regen_period = deck.get_real("phase.regen_period");
  p.density_cosine = deck.get_real("phase.density_cosine");
  p.cluster_cosine = deck.get_real("phase.cluster_cosine");
  p.span_eigenvalue = deck.get_real("phase.span_eigenvalue");
  p.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  const std::string list = deck.get_text("phase.beta_list");
  if (!list.empty()) {
    p.betas = parse_real_list("phase.beta_list", list);
    for (double b : p.betas)
      if (b > 700)
        throw InputError("deck key 'phase.beta_list' = '" + list + "': beta " + std::to_string(b) +
                         " above 700 (e^beta overflows E_beta)");
  } else {
    const double lo = deck.get_real("phase.beta_min"), hi = deck.get_real("phase.beta_max");
    const std::int64_t count = deck.get_int("phase.betas");
    if (hi < lo)
      throw InputError("deck key 'phase.beta_max' = '" + deck.get_text("phase.beta_max") + "': below phase.beta_min");
    for (std::int64_t k = 0; k < count; ++k)
      p.betas.push_back(count == 1 ? hi : lo + (hi - lo) * static_cast<double>(k) / static_cast<double>(count - 1));
  }
  if (p.betas.empty()) throw InputError("deck key 'phase.beta_list': no beta");
  // A block of consecutive betas: block k of K takes grid indices [k B / K, (k + 1) B / K).
  const std::int64_t blocks = blocks_ = deck.get_int("phase.blocks"), block = block_ = deck.get_int("phase.block");
  const std::int64_t all = static_cast<std::int64_t>(p.betas.size());
  if (blocks > all)
    throw InputError("deck key 'phase.blocks' = '" + deck.get_text("phase.blocks") + "': more blocks than the " +
                     std::to_string(all) + " betas");
  if (block >= blocks)
    throw InputError("deck key 'phase.block' = '" + deck.get_text("phase.block") + "': blocks are numbered 0 .. " +
                     std::to_string(blocks - 1) + " (phase.blocks = " + std::to_string(blocks) + ")");
  p.beta_offset = block * all / blocks;
  p.betas = std::vector<double>(p.betas.begin() + p.beta_offset, p.betas.begin() + (block + 1) * all / blocks);
  p.mlp = deck.get_bool("mlp.enabled");
  p.mlp_params = mlp_params_from_deck(deck);
  // The gathered statistics (4 values a system) are counted in int by MPI.
  if (static_cast<double>(p.betas.size()) * static_cast<double>(p.systems) > 5e8)
    throw InputError("deck key 'phase.systems' = '" + deck.get_text("phase.systems") + "': betas x systems above 5e8");
}

MemoryEstimate PhaseStudy::memory() const {
  const double systems = static_cast<double>(params_.betas.size()) * static_cast<double>(params_.systems);
  const double local = std::ceil(systems / comm_.size()), n = static_cast<double>(params_.tokens), d = params_.d;
  MemoryEstimate memory;
  memory.add("tokens of this rank's systems [systems/P, n, d]", local * n * d);
  memory.add("a system's step and statistics buffers [n, 2d + 2]", n * (2 * d + 2) + 4 * d * d);
  memory.add("every system's statistics, gathered [systems, 4] x 2", 8 * systems);
  if (params_.mlp) mlp_memory(memory, params_.mlp_params.width, params_.d);
  return memory;
}

RunState& PhaseStudy::setup() {
  state_ = std::make_unique<PhaseSystems>(comm_, params_);
  return *state_;
}

std::string PhaseStudy::banner() const {
  const PhaseParams& p = params_;
  char line[512];
  std::snprintf(line, sizeof line,
                "tokdyn phase: %zu betas in [%g, %g] x %lld systems of n = %lld tokens in d = %d, T = %g, %s, step %g%s, "
                "B %s, V %s%s", p.betas.size(), p.betas.front(), p.betas.back(), static_cast<long long>(p.systems),
                static_cast<long long>(p.tokens), p.d, p.horizon, p.softmax ? "SA" : "USA", p.step,
                !p.softmax && !p.raw_step ? " (rescaled by beta)" : "", p.bilinear.c_str(), p.value.c_str(),
                p.bilinear == "identity" && p.value == "identity" ? ""
                : p.regen_period > 0 ? (", drawn per " + p.scope + ", again every " + std::to_string(p.regen_period)).c_str()
                                     : (", drawn per " + p.scope).c_str());
  std::string text = line;
  if (p.mlp) text += ", random MLP of width " + std::to_string(p.mlp_params.width) + " (" + p.mlp_params.activation + ")";
  if (blocks_ > 1)
    text += "; block " + std::to_string(block_) + " of " + std::to_string(blocks_) + ": grid betas " +
            std::to_string(p.beta_offset) + " .. " + std::to_string(p.beta_offset + static_cast<std::int64_t>(p.betas.size()) - 1);
  return text;
}

std::string PhaseStudy::plan() const {
  double steps = 0;
  for (double beta : params_.betas)
    steps += static_cast<double>(params_.systems) * static_cast<double>(phase_steps_per_record(params_, beta));
  const double n = static_cast<double>(params_.tokens);
  char line[256];
  std::snprintf(line, sizeof line, "%lld records; %.3g system steps per record, %.3g pairs in all",
                static_cast<long long>(params_.records), steps, steps * n * n * static_cast<double>(params_.records));
  return line;
}

}  // namespace tokdyn
