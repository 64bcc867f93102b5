// tokdyn converge, study tokens: propagation of chaos (doc/science.md section 6.2, Prop 1.2). Per level N = N0 2^j and
// replica: W2^2, MMD^2 and the errors of E_beta and of the mean token between mu^N_t and the mean-field
// solution under one common noise; per level the mean of sup_t W2^2 and the fitted slope against log N,
// next to the bound r_d(N) and the rate for uniform measures.
#include <cmath>
#include <cstdio>

#include "commands.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/studies/chaos.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/io/run_file.hpp"

namespace tokdyn {
namespace {

// sup over times (or the last time) of series [R, J, S] -> [R, J].
std::vector<double> over_time(const std::vector<double>& series, std::size_t rj, std::size_t S, bool last) {
  std::vector<double> out(rj, 0.0);
  for (std::size_t k = 0; k < rj; ++k)
    for (std::size_t t = 0; t < S; ++t) out[k] = last ? series[k * S + t] : std::max(out[k], series[k * S + t]);
  return out;
}

}  // namespace

int run_converge_tokens(Run& run) {
  const Comm& comm = run.comm();
  const Deck& deck = run.deck();
  const StudyTasks tasks = study_tasks(deck, deck.get_int("converge.N0"));
  const int d = static_cast<int>(deck.get_int("model.d"));
  ChaosStudy study;
  study.sizes = tasks.levels;
  study.replicas = tasks.replicas;
  study.every = deck.get_int("converge.every");
  study.sliced_directions = deck.get_int("converge.sliced_directions");
  study.beta = deck.get_real("attention.beta");
  // The distance is decided from every level of the study, so that the tasks of a sweep agree.
  std::vector<std::int64_t> all_sizes;
  for (std::int64_t j = 0; j < deck.get_int("converge.levels"); ++j) all_sizes.push_back(deck.get_int("converge.N0") << j);
  study.reference = meanfield_spec_from_deck(deck);
  study.particle_style = deck.get_text("converge.particle_style");
  study.distance = chaos_distance(study.reference, deck.get_text("converge.distance"),
                                  deck.get_int("converge.assignment_max"), all_sizes);
  // The reference solver and the particle systems of every level, all distributed over the ranks.
  MemoryEstimate memory;
  meanfield_memory(memory, study.reference, comm.size());
  double tokens = 0;
  for (std::int64_t n : study.sizes) tokens += static_cast<double>(n);
  memory.add("particle systems [sum N / P, d] x 12", 12 * tokens / comm.size() * d);
  memory.add("gathered measures [M + N, d] x 2", 2 * (static_cast<double>(deck.get_int("meanfield.points")) + tokens) * d);
  run.require_memory(memory);

  char line[320];
  std::snprintf(line, sizeof line,
                "tokdyn converge tokens: d = %d, N = %lld .. %lld, L = %lld, T = %g, reference %s (%lld), %s W2, %zu replicas",
                d, static_cast<long long>(study.sizes.front()), static_cast<long long>(study.sizes.back()),
                static_cast<long long>(deck.get_int("model.L")), deck.get_real("model.T"),
                deck.get_text("meanfield.solver").c_str(),
                static_cast<long long>(deck.get_int(deck.get_text("meanfield.solver") == "grid" ? "meanfield.cells" : "meanfield.points")),
                study.distance.c_str(), study.replicas.size());
  comm.print(line);

  ChaosReplicas state(comm, study);
  state.on_finish([&](RunFile& file) {
    const ChaosResult r = state.result();
    char text[320];
    const std::size_t J = study.sizes.size(), R = study.replicas.size(), S = r.times.size();
    const std::vector<double> w2_sup = over_time(r.w2, R * J, S, false), w2_final = over_time(r.w2, R * J, S, true);
    const std::vector<double> mmd2_sup = over_time(r.mmd2, R * J, S, false);
    const std::vector<double> energy_sup = over_time(r.energy_error, R * J, S, false);
    const std::vector<double> mean_sup = over_time(r.mean_error, R * J, S, false);

    comm.print("        N   E sup_t W2^2 (95% CI)        E sup_t MMD^2   E sup |dE_beta|   E sup |d mean|");
    for (std::size_t j = 0; j < J; ++j) {
      double s1 = 0, s2 = 0, m = 0, e = 0, x = 0;
      for (std::size_t i = 0; i < R; ++i) {
        const double v = w2_sup[i * J + j];
        s1 += v, s2 += v * v, m += mmd2_sup[i * J + j], e += energy_sup[i * J + j], x += mean_sup[i * J + j];
      }
      const double mean = s1 / R, sd = R > 1 ? std::sqrt(std::max(0.0, (s2 - R * mean * mean) / (R - 1))) : 0;
      std::snprintf(text, sizeof text, "  %7lld   %.4e +- %.2e        %.4e      %.4e        %.4e",
                    static_cast<long long>(study.sizes[j]), mean, 1.96 * sd / std::sqrt(static_cast<double>(R)), m / R,
                    e / R, x / R);
      comm.print(text);
    }
    const double bound = chaos_bound_slope(d), sharp = chaos_sharp_slope(d);
    if (J >= 2) {
      const Estimate w = level_slope(study.sizes, w2_sup, R), m = level_slope(study.sizes, mmd2_sup, R);
      std::snprintf(text, sizeof text,
                    "slope of log E sup W2^2: %.3f [%.3f, %.3f] (bound r_d: %.3f, uniform measures: %.3f); of MMD^2: %.3f [%.3f, %.3f]",
                    w.value, w.low, w.high, bound, sharp, m.value, m.low, m.high);
      comm.print(text);
    }

    const hid_t g = file.study_group("converge");
    h5::write_attribute(g, "study", std::string("tokens"));
    h5::write_attribute(g, "distance", study.distance);
    h5::write_attribute(g, "d", static_cast<std::int64_t>(d));
    h5::write_attribute(g, "bound_slope", bound);
    h5::write_attribute(g, "sharp_slope", sharp);
    h5::write_attribute(g, "reference_solver", deck.get_text("meanfield.solver"));
    h5::write_attribute(g, "reference_size",
                        deck.get_int(deck.get_text("meanfield.solver") == "grid" ? "meanfield.cells" : "meanfield.points"));
    std::vector<double> lv(study.sizes.begin(), study.sizes.end()), rp(study.replicas.begin(), study.replicas.end());
    h5::write_vector(g, "levels", lv, comm.get());
    h5::write_vector(g, "replicas", rp, comm.get());
    h5::write_vector(g, "times", r.times, comm.get());
    h5::write_vector(g, "w2", r.w2, comm.get(), {R, J, S});
    h5::write_vector(g, "mmd2", r.mmd2, comm.get(), {R, J, S});
    h5::write_vector(g, "energy_error", r.energy_error, comm.get(), {R, J, S});
    h5::write_vector(g, "mean_error", r.mean_error, comm.get(), {R, J, S});
    h5::write_vector(g, "w2_sup", w2_sup, comm.get(), {R, J});
    h5::write_vector(g, "w2_final", w2_final, comm.get(), {R, J});
    h5::write_vector(g, "mmd2_sup", mmd2_sup, comm.get(), {R, J});
    h5::write_vector(g, "energy_error_sup", energy_sup, comm.get(), {R, J});
    h5::write_vector(g, "mean_error_sup", mean_sup, comm.get(), {R, J});
  });
  return run.execute(state, RunInfo{"", "", static_cast<std::uint64_t>(deck.get_int("run.seed")), 0, d, ""});
}


}  // namespace tokdyn
