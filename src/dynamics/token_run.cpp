#include "tokdyn/dynamics/token_run.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/fourier_attention.hpp"
#include "tokdyn/attention/harmonic_attention.hpp"
#include "tokdyn/core/console/phases.hpp"


namespace tokdyn {

void token_memory(MemoryEstimate& memory, const AttentionSpec* attention, const Partition& partition, int d,
                  int tile) {
  const double n = static_cast<double>(partition.max_count()), dd = d;
  memory.add("tokens and step buffers [N/P, d] x 6", 6 * n * dd);
  memory.add("pair statistics: travelling blocks [N/P, d + 2] x 3", 3 * n * (dd + 2) + double(tile) * tile);
  if (!attention) return;
  memory.add("attention weights Q, K, V [d, d] x 3", 3 * dd * dd);
  if (!attention_styles().traits(attention->style).ring) {
    // The fast styles: a harmonic table of at most 1 MiB and its moments, or the random features [M, d], a tile
    // of their exponentials [tile, M] and their moments [M, d + 1] x 2.
    const double m = attention->features;
    memory.add("attention, fast sums: tables, features and moments", 131072 + m * (4 * dd + 2) + tile * (m + 3 * dd));
    return;
  }
  memory.add("attention: ring blocks [N/P, 2d + 1] x 3, queries, accumulators", n * (3 * (2 * dd + 1) + 2 * dd + 2) +
                                                                                      double(tile) * tile);
  const bool half = half_ring_applies(attention->weights);
  if (half) {
    // The half ring's block [N/P, 2d + 2] and its travelling copies with their accumulators [N/P, 3d + 3] x 2,
    // the row sums [N/P, d + 1] x 2.
    memory.add("attention, half ring: blocks, accumulators", n * (10 * dd + 10) + 2.0 * tile * tile);
  }
  if (attention->single_tiles) {
    // float copies (half a double each) of the queries [N/P, d], a key block [N/P, 2d] and a tile, and in the
    // half ring of the tokens and both blocks' operands [N/P, 2d] x 2.
    memory.add("attention, float32 tiles: float copies of the operands", 0.5 * (n * (3 * dd + (half ? 4 * dd : 0)) +
                                                                                  2.0 * tile * tile));
  }
}

TokenRun::TokenRun(const Comm& comm, const Partition& partition, int d, std::int64_t layers, Dynamics& dynamics,
                   PairStatisticsPass& statistics, const TokenCadence& cadence, double beta,
                   std::function<void(std::vector<double>&)> initial)
    : comm_(comm), partition_(partition), d_(d), layers_(layers), dynamics_(dynamics), statistics_(statistics),
      cadence_(cadence), beta_(beta), initial_(std::move(initial)),
      x_(static_cast<std::size_t>(partition.count(comm.rank())) * d) {}

void TokenRun::begin(RunFile& file) {
  file.write_diagnostics_constant("cosine_bin_edges", statistics_.bin_edges());
  file.set_diagnostics_attribute("beta", beta_);
  // How the pair statistics were formed: exact, sampled (the subset's size) or off.
  file.set_diagnostics_attribute("pairs", std::string(pairs_mode_name(statistics_.sampling().mode)));
  file.set_diagnostics_attribute("sample_tokens", static_cast<double>(statistics_.sample_size()));
  observe(0, file);
}

std::int64_t TokenRun::advance(std::int64_t layer) {
  if (layer % cadence_.every != 0) {
    dynamics_.step(layer, x_.data());
    return layer + 1;
  }
  // A recorded layer: the step's attention pass over its tokens forms their statistics too (one pass for
  // both); the series energy reads them before they move. The next observe writes the row.
  std::optional<PairStatistics> series = series_energy();
  const PairStatistics s = dynamics_.step(layer, x_.data(), statistics_);
  pending_ = record(layer, s, series);
  return layer + 1;
}

TokenRun::Record TokenRun::record(std::int64_t layer, PairStatistics s, const std::optional<PairStatistics>& series) {
  Record r;
  r.row.layer = layer;
  r.row.time = dynamics_.time(layer);
  const PairsMode mode = statistics_.sampling().mode;
  bool from_series = false;
  if (mode != PairsMode::exact && (d_ == 2 || d_ == 3)) {
    // On S^1 and S^2 E_beta has an O(N p) or O(N p^2) series with an absolute error ~1e-15 e^beta: it
    // replaces the NaN of pairs = off, and the sample's estimate when its bound is below the sample's
    // standard error (near a cluster, E_beta << e^beta, the sample's expm1 terms are the better estimate);
    // only for unit tokens. energy_series says which one the row holds.
    from_series = series && (mode == PairsMode::off || series->energy_stderr < s.energy_stderr);
    if (from_series) s.energy = series->energy, s.energy_stderr = series->energy_stderr;
  }
  r.row.scalars = {{"energy", s.energy},
                   {"order_parameter", s.order_parameter},
                   {"mean_cosine", s.mean_cosine},
                   {"min_cosine", s.min_cosine}};
  if (mode != PairsMode::exact && (d_ == 2 || d_ == 3))
    r.row.scalars.push_back({"energy_series", from_series ? 1.0 : 0.0});
  if (mode == PairsMode::sampled) r.row.scalars.push_back({"energy_stderr", s.energy_stderr});
  r.row.counts = {{"cosine_histogram", s.histogram}};
  // Means and minima over no pair (N = 1) are NaN by definition; E_beta (unless off) and |mean x| must be finite.
  if ((mode != PairsMode::off && !std::isfinite(s.energy)) || !std::isfinite(s.order_parameter))
    r.problem = "E_beta or |mean x| is NaN or Inf after layer " + std::to_string(layer);
  char line[256];
  std::snprintf(line, sizeof line, "layer %lld: E_beta %.6g, |mean x| %.6g, mean cosine %.6g, min cosine %.6g",
                static_cast<long long>(layer), s.energy, s.order_parameter, s.mean_cosine, s.min_cosine);
  r.line = line;
  return r;
}

std::string TokenRun::write(const Record& r, RunFile& file) {
  file.write_diagnostics(r.row);
  last_row_ = r.line;
  return r.problem;
}

std::string TokenRun::observe(std::int64_t layer, RunFile& file) {
  const bool last = layer == layers_;
  std::string problem;
  if (pending_) {  // the row the last step formed
    problem = write(*pending_, file);
    pending_.reset();
  }
  if (last) {
    // After the last layer there is no step to share a pass with: the statistics' own pass.
    PhaseScope timed(Phase::diagnostics);
    std::optional<PairStatistics> series = series_energy();
    const std::string p = write(record(layer, statistics_.compute(dynamics_.directions(x_.data())), series), file);
    if (problem.empty()) problem = p;
  }
  const bool snap = cadence_.snapshot_every > 0 ? layer % cadence_.snapshot_every == 0 : layer == 0;
  if (snap || last)
    file.write_snapshot(layer, dynamics_.time(layer), x_.data(), partition_.begin(comm_.rank()),
                        partition_.count(comm_.rank()));
  return problem;
}

std::optional<PairStatistics> TokenRun::series_energy() const {
  const PairsMode mode = statistics_.sampling().mode;
  if (mode == PairsMode::exact || (d_ != 2 && d_ != 3)) return std::nullopt;
  PhaseScope timed(Phase::diagnostics);
  const double* x = dynamics_.directions(x_.data());
  double worst = 0, all = 0;
  for (std::size_t i = 0; i < x_.size(); i += d_) {
    double r2 = 0;
    for (int a = 0; a < d_; ++a) r2 += x[i + a] * x[i + a];
    worst = std::max(worst, std::abs(r2 - 1));
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, comm_.get()));
  if (!(all <= 1e-12)) return std::nullopt;  // off the sphere: the series (of directions) would not be E_beta
  const std::int64_t n = partition_.count(comm_.rank());
  PairStatistics s;
  if (d_ == 2) {
    const CircleStatistics c = circle_statistics(comm_.get(), n, x, nullptr, beta_);
    s.energy = c.energy;
    s.energy_stderr = (c.terms + 1) * 2.2e-16 * std::exp(beta_);  // the series' error bound, not a sample's
  } else {
    const SphereStatistics c = sphere_statistics(comm_.get(), n, x, beta_);
    s.energy = c.energy;
    s.energy_stderr = c.error_bound;
  }
  return s;
}

std::vector<std::string> TokenRun::summary() const {
  if (last_row_.empty()) return {};
  return {last_row_};
}

bool TokenRun::finite() const {
  for (double v : x_)
    if (!std::isfinite(v)) return false;
  return true;
}

std::string TokenRun::nonfinite_message(std::int64_t layer) const {
  return "NaN or Inf in the token state after layer " + std::to_string(layer) +
         " (reduce model.T/model.L, attention.beta or the weight scales)";
}

void TokenRun::save(CheckpointWriter& out) const { out.rows("X", x_.data(), partition_, d_); }

void TokenRun::restore(const CheckpointReader& in, RunFile& file) { in.rows("X", x_.data(), partition_, d_); }

}  // namespace tokdyn
