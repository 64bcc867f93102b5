// tokdyn spectrum: the leading eigenpairs of each layer matrix F_t = O_t V_t (doc/science.md sections
// 7.1 and 7.4): eigenvalues, residuals, converged count, spectral gap, real plane of a complex pair, eigenvectors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>

#include "commands.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/progress.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/spectral/distributed_layer_matrix.hpp"
#include "tokdyn/spectral/eigensolver.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// spectrum.layers: "all", or 0-based indices separated by commas. A shared source has one matrix: its
// first listed layer stands for all.
std::vector<std::int64_t> layers_of(const std::string& text, std::int64_t layers, bool shared) {
  std::vector<std::int64_t> out;
  if (text == "all") {
    for (std::int64_t t = 0; t < layers; ++t) out.push_back(t);
  } else {
    for (const std::int64_t t : parse_index_list("spectrum.layers", text, "a layer index")) {
      if (t >= layers)
        throw InputError("deck key 'spectrum.layers' = '" + text + "': layer " + std::to_string(t) +
                         " is outside [0, " + std::to_string(layers) + ")");
      out.push_back(t);
    }
    if (out.empty()) throw InputError("deck key 'spectrum.layers' is empty (give all, or layer indices)");
  }
  if (shared) out.resize(1);
  return out;
}

// [rows, count] vector rows padded with NaN rows to [nev, count].
std::vector<double> padded(const std::vector<double>& rows, int nev, std::int64_t count) {
  std::vector<double> out(static_cast<std::size_t>(nev) * count, nan);
  std::copy(rows.begin(), rows.end(), out.begin());
  return out;
}

// The /spectrum series, a row per solved layer, created at the first solve (-eps_nev may change the deck's
// nev) or found again in a run file restored from a checkpoint. Timing series carry the attribute
// `timing`: they are the only values two runs of one deck do not share.
struct SpectrumFile {
  int nev = 0, d = 0;
  bool vectors = false, left = false;

  hid_t series(RunFile& file, const char* name, hid_t type, const std::vector<hsize_t>& row) const {
    return file.study_series("spectrum", name, type, row);
  }

  // Collective: row `row` from r (every rank holds the same values; each its entries of the vectors).
  void write(RunFile& file, hsize_t row, std::int64_t t, const EigenResult& r, double total, double build, bool root,
             const Partition& rows, int rank) const {
    const hsize_t one = root ? 1 : 0, many = root ? static_cast<hsize_t>(nev) : 0, k = static_cast<hsize_t>(nev),
                  n = static_cast<hsize_t>(d);
    auto scalar_i = [&](const char* name, std::int64_t v) {
      h5::write_series_row(series(file, name, H5T_STD_I64LE, {}), row, H5T_NATIVE_INT64, &v, 0, one);
    };
    auto scalar_d = [&](const char* name, double v) {
      h5::write_series_row(series(file, name, H5T_IEEE_F64LE, {}), row, H5T_NATIVE_DOUBLE, &v, 0, one);
    };
    auto values = [&](const char* name, const std::vector<double>& v) {
      const std::vector<double> p = padded(v, nev, 1);
      h5::write_series_row(series(file, name, H5T_IEEE_F64LE, {k}), row, H5T_NATIVE_DOUBLE, p.data(), 0, many);
    };
    scalar_i("layer", t);
    values("eigenvalues_re", r.re);
    values("eigenvalues_im", r.im);
    values("residual", r.residual);
    if (left) values("left_residual", r.left_residual);
    scalar_i("converged", r.converged);
    scalar_d("gap", r.gap);
    scalar_i("complex_leading", r.complex_leading ? 1 : 0);
    scalar_d("seconds", total);
    scalar_d("build_seconds", build);
    scalar_i("iterations", r.iterations);
    const std::int64_t begin = rows.begin(rank), count = rows.count(rank);
    h5::write_series_columns(series(file, "plane", H5T_IEEE_F64LE, {2, n}), row, 2,
                             (r.plane.empty() ? padded({}, 2, count) : r.plane).data(), begin, count);
    if (vectors)
      h5::write_series_columns(series(file, "vectors", H5T_IEEE_F64LE, {k, n}), row, k,
                               padded(r.right, nev, count).data(), begin, count);
    if (vectors && left)
      h5::write_series_columns(series(file, "left_vectors", H5T_IEEE_F64LE, {k, n}), row, k,
                               padded(r.left, nev, count).data(), begin, count);
    if (row == 0)
      for (const char* timing : {"seconds", "build_seconds"})
        h5::write_attribute(series(file, timing, H5T_IEEE_F64LE, {}), "timing", std::int64_t(1));
  }
};

std::string which_name(Which w) { return w == Which::largest_real ? "largest-real" : "largest-magnitude"; }

}  // namespace

DeckSchema spectrum_schema() {
  DeckSchema s;
  add_run_keys(s, "spectrum.h5");
  add_weight_keys(s);
  s.add_int("spectrum.nev", 10, "eigenpairs per layer (a complex pair counts 2; -eps_nev overrides it for SLEPc)", 1);
  s.add_choice("spectrum.which", "largest-magnitude", {"largest-magnitude", "largest-real"},
               "which end of the spectrum: largest |lambda| (the power method's) or largest real part");
  s.add_choice("spectrum.solver", "auto", {"auto", "krylovschur", "lapack"},
               "krylovschur (SLEPc, -eps_* options honoured), lapack (dgeev of F gathered on rank 0), or auto: "
               "lapack for d <= spectrum.dense_max, else krylovschur");
  s.add_choice("spectrum.operator", "shell", {"shell", "dense"},
               "what Krylov-Schur multiplies by: the shell x -> O (V x) (no F: 2 d D / P doubles per rank, "
               "4 d D flops per product) or the dense MPI matrix F (2 d^2 D flops to build, then 2 d^2 per "
               "product: worth it only for more than about d products); lapack always forms F");
  s.add_bool("spectrum.residual", false,
             "solve I + F (the residual layer, r = 1 in doc/science.md section 7.2): eigenvalues 1 + lambda");
  s.add_bool("spectrum.left", false, "left eigenvectors too (Krylov-Schur: a second solve on F^T; lapack: dgeev's)");
  s.add_text("spectrum.layers", "all", "layers to solve: all, or 0-based indices separated by commas "
             "(shared weights: one solve)");
  s.add_int("spectrum.ncv", 0, "Krylov-Schur subspace size; 0 = SLEPc's default", 0);
  s.add_int("spectrum.mpd", 0, "Krylov-Schur maximum projected dimension; 0 = SLEPc's default", 0);
  s.add_real("spectrum.tol", 1e-10, "Krylov-Schur tolerance on |F v - lambda v| / |lambda|", 0.0, 1.0, true);
  s.add_int("spectrum.max_it", 0, "Krylov-Schur maximum restarts; 0 = SLEPc's default", 0);
  add_dense_max_key(s);
  s.add_bool("spectrum.vectors", true, "store the eigenvectors (/spectrum/vectors [layers, nev, d])");
  return s;
}

int run_spectrum(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  Run run(comm, schema, request, "spectrum");
  if (run.done()) return 0;
  const Deck& deck = run.deck();
  const std::unique_ptr<WeightSource> source = weights_from_deck(deck, comm.get());
  const int d = source->d();
  const std::int64_t total_layers = source->layers();
  const std::vector<std::int64_t> layers = layers_of(deck.get_text("spectrum.layers"), total_layers, source->shared());

  EigenSettings s;
  s.nev = static_cast<int>(deck.get_int("spectrum.nev"));
  s.which = deck.get_text("spectrum.which") == "largest-real" ? Which::largest_real : Which::largest_magnitude;
  s.residual = deck.get_bool("spectrum.residual");
  s.left = deck.get_bool("spectrum.left");
  s.vectors = deck.get_bool("spectrum.vectors");
  s.ncv = static_cast<int>(deck.get_int("spectrum.ncv"));
  s.mpd = static_cast<int>(deck.get_int("spectrum.mpd"));
  s.tol = deck.get_real("spectrum.tol");
  s.max_it = static_cast<int>(deck.get_int("spectrum.max_it"));
  s.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  s.progress_interval = deck.get_real("run.progress_interval");
  if (s.nev > d)
    throw InputError("deck key 'spectrum.nev' = " + std::to_string(s.nev) + " exceeds d = " + std::to_string(d));
  std::string solver = deck.get_text("spectrum.solver");
  solver = use_krylov(solver, d, deck.get_int("spectrum.dense_max")) ? "krylovschur" : "lapack";
  const std::string& op = deck.get_text("spectrum.operator");
  if (solver == "krylovschur" && s.ncv > 0 && (s.ncv <= s.nev || s.ncv > d))
    throw InputError("deck key 'spectrum.ncv' = " + std::to_string(s.ncv) + " must lie in (nev = " +
                     std::to_string(s.nev) + ", d = " + std::to_string(d) + "]");

  {
    // Per rank: the layer's rows of V and O (shell) or of F (dense), LAPACK's gathered F with its
    // eigenvectors on rank 0, the Krylov basis, the stored vectors.
    const double dd = d, width = static_cast<double>(source->heads()) * source->head_dim(), P = comm.size();
    const double ncv = s.ncv > 0 ? s.ncv : std::max(2.0 * s.nev, s.nev + 15.0);
    MemoryEstimate memory;
    if (solver == "lapack") memory.add("LAPACK: F, eigenvectors and work [d, d] x 5 (rank 0)", 5 * dd * dd);
    else if (op == "dense") memory.add("distributed F [d/P, d] and a block of V", dd * dd / P + 2 * width * dd / P);
    else memory.add("V, O rows [D/P, d] + [d/P, D]", 2 * width * dd / P);
    if (solver != "lapack") memory.add("Krylov basis [ncv, d/P]", ncv * dd / P);
    memory.add("layer weights read per layer [D, d] x 4", 4 * width * dd / P);
    run.require_memory(memory);
  }

  char line[512];
  std::snprintf(line, sizeof line, "tokdyn spectrum: %s; %zu layer%s of %lld%s; %s%s, nev %d, %s%s, on %d rank%s",
                source->describe().c_str(), layers.size(), layers.size() == 1 ? "" : "s",
                static_cast<long long>(total_layers), source->shared() ? " (shared weights: one solve)" : "",
                solver.c_str(), solver == "krylovschur" ? (" (" + op + ")").c_str() : "", s.nev,
                which_name(s.which).c_str(), s.residual ? ", I + F" : "", comm.size(), comm.size() == 1 ? "" : "s");
  comm.print(line);

  // A run of one step per listed layer: solve in advance(), a row of /spectrum in observe(); the rows are
  // the state (they travel in the checkpoint's copy of the run file).
  class SpectrumRun : public RunState {
   public:
    std::function<void(std::int64_t)> solve;
    std::function<void(RunFile&, std::int64_t)> record;
    std::function<void(RunFile&)> done;
    std::int64_t count = 0;
    std::int64_t steps() const override { return count; }
    void begin(RunFile&) override {}
    std::int64_t advance(std::int64_t row) override {
      solve(row);
      return row + 1;
    }
    std::string observe(std::int64_t row, RunFile& file) override {
      record(file, row);
      return "";
    }
    bool finite() const override { return true; }  // the weights were checked at load; eigenpairs carry residuals
    void save(CheckpointWriter&) const override {}
    void restore(const CheckpointReader&, RunFile&) override {}
    void finish(RunFile& file) override { done(file); }
  } state;
  state.count = static_cast<std::int64_t>(layers.size());

  SpectrumFile out;
  out.d = d;
  const Partition rows(d, comm.size());
  const double start = MPI_Wtime();
  EigenResult r;
  double times[2] = {0, 0};
  state.solve = [&](std::int64_t row) {
    const std::int64_t t = layers[row];
    const double t0 = MPI_Wtime();
    double build = 0;
    if (solver == "krylovschur" && op == "shell") {
      const LayerOperator layer_op(comm.get(), *source, t, s.residual);
      build = MPI_Wtime() - t0;
      r = eigen_operator(comm.get(), layer_op, s);
    } else {
      std::vector<double> f = distributed_layer_rows(comm.get(), *source, t);
      build = MPI_Wtime() - t0;
      r = solver == "lapack" ? eigen_lapack(comm.get(), rows, std::move(f), s)
                             : eigen_dense(comm.get(), rows, std::move(f), s);
    }
    // Rank 0's clock for every rank: the file and the lines say the same.
    times[0] = MPI_Wtime() - t0;
    times[1] = build;
    TOKDYN_MPI_CHECK(MPI_Bcast(times, 2, MPI_DOUBLE, 0, comm.get()));
  };
  state.record = [&](RunFile& file, std::int64_t done) {
    const std::size_t row = static_cast<std::size_t>(done - 1);
    const std::int64_t t = layers[row];
    if (out.nev == 0) {  // the first solve of this process fixes nev (restored runs: the same deck, the same nev)
      out.nev = r.nev;
      out.vectors = s.vectors;
      out.left = s.left;
      const hid_t g = file.study_group("spectrum");
      h5::write_attribute(g, "eps_type", r.method);
      h5::write_attribute(g, "residual_definition", r.residual_definition);
    }
    out.write(file, row, t, r, times[0], times[1], comm.root(), rows, comm.rank());
    double worst = 0;
    for (double e : r.residual) worst = std::max(worst, e);
    const double l1 = r.converged > 0 ? std::hypot(r.re[0], r.im[0]) : nan;
    const double elapsed = MPI_Wtime() - start;
    const double remaining = elapsed / static_cast<double>(row + 1) * static_cast<double>(layers.size() - row - 1);
    std::string angle;
    if (r.complex_leading) angle = " (pair, angle " + std::to_string(std::atan2(r.im[0], r.re[0])) + ")";
    std::snprintf(line, sizeof line,
                  "layer %lld (%zu/%zu): %d/%d converged, |l1| = %.6g%s, gap = %.4g, max residual %.1e, %.2f s "
                  "(build %.2f s), elapsed %s, remaining %s",
                  static_cast<long long>(t), row + 1, layers.size(), r.converged, r.nev, l1, angle.c_str(), r.gap,
                  worst, times[0], times[1], format_seconds(elapsed).c_str(), format_seconds(remaining).c_str());
    comm.print(line);
  };
  state.done = [&](RunFile& file) {
    const hid_t g = file.study_group("spectrum");
    h5::write_attribute(g, "solver", solver);
    h5::write_attribute(g, "operator", solver == "lapack" ? std::string("dense") : op);
    h5::write_attribute(g, "which", which_name(s.which));
    h5::write_attribute(g, "nev", static_cast<std::int64_t>(
                                      h5::dims(file.study_series("spectrum", "eigenvalues_re", H5T_IEEE_F64LE, {1}))[1]));
    h5::write_attribute(g, "d", static_cast<std::int64_t>(d));
    h5::write_attribute(g, "residual", static_cast<std::int64_t>(s.residual));
    h5::write_attribute(g, "tol", s.tol);
    h5::write_attribute(g, "shared", static_cast<std::int64_t>(source->shared()));
    h5::write_attribute(g, "layers_total", total_layers);
    h5::write_attribute(g, "source", source->describe());
  };
  return run.execute(state, RunInfo{"", "", s.seed, 0, d, ""});
}

}  // namespace tokdyn
