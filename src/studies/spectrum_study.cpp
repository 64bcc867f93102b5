#include "tokdyn/studies/spectrum_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/progress.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/spectral/distributed_layer_matrix.hpp"

namespace tokdyn {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// What /spectrum holds (io/outputs.hpp): declared here, beside the code that writes it.
constexpr OutputDecl kSpectrumOutputs[] = {
    {"spectrum/build_seconds", OutputType::real, "seconds", "row",
     "Wall-clock time on rank 0 spent building the row's operator or distributed matrix F before the solve (a timing: "
     "differs between runs)."},
    {"spectrum/complex_leading", OutputType::integer, "1", "row",
     "1 when the leading eigenvalue lambda_1 has a nonzero imaginary part (a complex pair), else 0."},
    {"spectrum/converged", OutputType::integer, "count", "row",
     "Number of eigenvalues kept for the row (converged, a complex pair counting 2), at most nev."},
    {"spectrum/eigenvalues_im", OutputType::real, "1", "row, eigenpair",
     "Imaginary parts of the leading eigenvalues, in the order of eigenvalues_re; NaN beyond the converged count."},
    {"spectrum/eigenvalues_re", OutputType::real, "1", "row, eigenpair",
     "Real parts of the leading eigenvalues of the solved matrix, in the order of spectrum.which, a complex pair as "
     "consecutive entries (positive imaginary part first); NaN beyond the converged count."},
    {"spectrum/gap", OutputType::real, "1", "row",
     "Spectral gap of the solved matrix, 1 - |lambda_2|/|lambda_1|, or 1 - |lambda_3|/|lambda_1| when lambda_1, "
     "lambda_2 are a complex pair; NaN when too few eigenvalues converged."},
    {"spectrum/iterations", OutputType::integer, "count", "row",
     "Eigensolver restarts (iterations) of the row's solve; 0 for LAPACK."},
    {"spectrum/layer", OutputType::integer, "layers", "row",
     "0-based index of the model layer t whose matrix F_t = O_t V_t (or I + F_t with spectrum.residual) the row solves "
     "(spectrum.layers; one row for shared weights)."},
    {"spectrum/left_residual", OutputType::real, "1", "row, eigenpair",
     "spectrum.left: relative residual norm of each left eigenvector u (u^H A = lambda u^H), defined as residual; NaN "
     "beyond the converged count."},
    {"spectrum/left_vectors", OutputType::real, "1", "row, eigenpair, coordinate",
     "spectrum.left and spectrum.vectors: left eigenvectors u (u^H A = lambda u^H) paired with the right ones by "
     "eigenvalue, in the layout of vectors; NaN rows beyond the converged count."},
    {"spectrum/plane", OutputType::real, "1", "row, basis_vector, coordinate",
     "Orthonormal basis (two rows) of the real plane span(Re v_1, Im v_1) of a complex leading pair; NaN when lambda_1 "
     "is real."},
    {"spectrum/residual", OutputType::real, "1", "row, eigenpair",
     "Relative residual norm of each right eigenpair as the residual_definition attribute says (Krylov-Schur: |A v - "
     "lambda v| / |lambda v|; LAPACK: |A v - lambda v| / (|A|_F |v|)); NaN beyond the converged count."},
    {"spectrum/seconds", OutputType::real, "seconds", "row",
     "Wall-clock time of the row's solve on rank 0, building the operator or matrix included (a timing: differs "
     "between runs)."},
    {"spectrum/vectors", OutputType::real, "1", "row, eigenpair, coordinate",
     "spectrum.vectors: right eigenvectors of the leading eigenvalues, unit 2-norm with the component of largest "
     "modulus real and positive, a complex pair as the rows Re v, Im v; NaN rows beyond the converged count."},
    {"spectrum/build_seconds@timing", OutputType::integer, "1", "",
     "1: the dataset is a timing (wall-clock seconds), one of the only values two runs of one deck do not share."},
    {"spectrum/seconds@timing", OutputType::integer, "1", "",
     "1: the dataset is a timing (wall-clock seconds), one of the only values two runs of one deck do not share."},
    {"spectrum@d", OutputType::integer, "1", "", "Model width d of the weight source: each layer matrix F_t is d x d."},
    {"spectrum@eps_type", OutputType::text, "", "",
     "Method of the solves: the SLEPc EPS type that ran (krylovschur unless -eps_type names another), or lapack "
     "(dgeev)."},
    {"spectrum@layers_total", OutputType::integer, "layers", "",
     "Layers of the weight source (weights.layers, or all it has), among which spectrum.layers picks the solved ones."},
    {"spectrum@nev", OutputType::integer, "count", "",
     "Eigenpairs requested per layer, the length of the eigenpair axis: spectrum.nev, or SLEPc's value after -eps_nev "
     "(a complex pair counts 2)."},
    {"spectrum@operator", OutputType::text, "", "",
     "What the eigensolver multiplied by: shell (x -> O (V x), F never formed) or dense (the row-distributed matrix "
     "F); spectrum.operator, always dense with lapack."},
    {"spectrum@residual", OutputType::integer, "1", "",
     "1 when the solved matrix is I + F_t, the residual layer (spectrum.residual: eigenvalues 1 + lambda), else 0 "
     "(F_t)."},
    {"spectrum@residual_definition", OutputType::text, "", "",
     "The relative residual norm of residual and left_residual, as a formula: '|A v - lambda v| / |lambda v| (SLEPc "
     "EPS_ERROR_RELATIVE)' (Krylov-Schur) or '|A v - lambda v| / (|A|_F |v|) (dense_residual)' (lapack)."},
    {"spectrum@shared", OutputType::integer, "1", "",
     "1 when the weight source has one set of weights for every layer (ALBERT, synthetic.shared): one row stands for "
     "all layers; else 0."},
    {"spectrum@solver", OutputType::text, "", "",
     "Eigensolver of the run: krylovschur (SLEPc) or lapack (dgeev of F gathered on rank 0); spectrum.solver with auto "
     "resolved (lapack for d <= spectrum.dense_max)."},
    {"spectrum@source", OutputType::text, "", "",
     "The weight source as one line: format and file (synthetic: kind and spectrum parameters), d, heads, layers and "
     "whether they are shared."},
    {"spectrum@tol", OutputType::real, "1", "",
     "Relative residual tolerance of the Krylov-Schur solves, |F v - lambda v| / |lambda| (spectrum.tol); lapack does "
     "not use it."},
    {"spectrum@which", OutputType::text, "", "",
     "End of the spectrum solved (spectrum.which): largest-magnitude (largest |lambda|) or largest-real."},
};
const DeclaredOutputs kSpectrumDeclared("spectrum", kSpectrumOutputs);

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

}  // namespace

// The /spectrum series, a row per solved layer, created at the first solve (-eps_nev may change the deck's
// nev) or found again in a run file restored from a checkpoint. Timing series carry the attribute
// `timing`: they are the only values two runs of one deck do not share.
struct SpectrumFile {
  int nev = 0, d = 0;
  bool vectors = false, left = false;

  // Collective: row `row` from r (every rank holds the same values; each its entries of the vectors).
  void write(RunFile& file, hsize_t row, std::int64_t t, const EigenResult& r, double total, double build, bool root,
             const Partition& rows, int rank) const {
    RunGroup g = file.group("spectrum");
    const hsize_t one = root ? 1 : 0, many = root ? static_cast<hsize_t>(nev) : 0, k = static_cast<hsize_t>(nev),
                  n = static_cast<hsize_t>(d);
    auto scalar_i = [&](const char* name, std::int64_t v) { g.write_row(name, {}, row, &v, 0, one); };
    auto scalar_d = [&](const char* name, double v) { g.write_row(name, {}, row, &v, 0, one); };
    auto values = [&](const char* name, const std::vector<double>& v) {
      const std::vector<double> p = padded(v, nev, 1);
      g.write_row(name, {k}, row, p.data(), 0, many);
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
    g.write_columns("plane", 2, n, row, (r.plane.empty() ? padded({}, 2, count) : r.plane).data(), begin, count);
    if (vectors) g.write_columns("vectors", k, n, row, padded(r.right, nev, count).data(), begin, count);
    if (vectors && left) g.write_columns("left_vectors", k, n, row, padded(r.left, nev, count).data(), begin, count);
    if (row == 0) {
      g.attribute("seconds@timing", std::int64_t(1));
      g.attribute("build_seconds@timing", std::int64_t(1));
    }
  }
};

namespace {

std::string which_name(Which w) { return w == Which::largest_real ? "largest-real" : "largest-magnitude"; }

}  // namespace

// A run of one step per listed layer: solve in advance(), a row of /spectrum in observe(); the rows are
// the state (they travel in the checkpoint's copy of the run file).
class SpectrumRun : public RunState {
 public:
  SpectrumRun(const Comm& comm, const SpectrumParams& p, const WeightSource& source,
              const std::vector<std::int64_t>& layers, const std::string& solver)
      : comm_(comm), p_(p), source_(source), layers_(layers), solver_(solver), rows_(source.d(), comm.size()),
        start_(MPI_Wtime()) {
    out_.d = source.d();
  }

  std::int64_t steps() const override { return static_cast<std::int64_t>(layers_.size()); }
  void begin(RunFile&) override {}
  std::int64_t advance(std::int64_t row) override {
    solve(layers_[row]);
    return row + 1;
  }
  std::string observe(std::int64_t done, RunFile& file) override {
    record(file, static_cast<std::size_t>(done - 1));
    return "";
  }
  bool finite() const override { return true; }  // the weights were checked at load; eigenpairs carry residuals
  void save(CheckpointWriter&) const override {}
  void restore(const CheckpointReader&, RunFile&) override {}
  void finish(RunFile& file) override;

 private:
  void solve(std::int64_t t);
  void record(RunFile& file, std::size_t row);

  const Comm& comm_;
  const SpectrumParams& p_;
  const WeightSource& source_;
  const std::vector<std::int64_t>& layers_;
  const std::string& solver_;
  const Partition rows_;  // F's rows by rank: PETSc's ownership
  SpectrumFile out_;
  double start_;
  EigenResult r_;                // of the last solve
  double times_[2] = {0, 0};     // its total and build seconds
};

// Layer t's eigenpairs into r_: Krylov-Schur on the shell operator, or on (LAPACK: of) the row-distributed F.
void SpectrumRun::solve(std::int64_t t) {
  const double t0 = MPI_Wtime();
  double build = 0;
  if (solver_ == "krylovschur" && p_.op == "shell") {
    const LayerOperator layer_op(comm_.get(), source_, t, p_.eigen.residual);
    build = MPI_Wtime() - t0;
    r_ = eigen_operator(comm_.get(), layer_op, p_.eigen);
  } else {
    std::vector<double> f = distributed_layer_rows(comm_.get(), source_, t);
    build = MPI_Wtime() - t0;
    r_ = solver_ == "lapack" ? eigen_lapack(comm_.get(), rows_, std::move(f), p_.eigen)
                             : eigen_dense(comm_.get(), rows_, std::move(f), p_.eigen);
  }
  // Rank 0's clock for every rank: the file and the lines say the same.
  times_[0] = MPI_Wtime() - t0;
  times_[1] = build;
  TOKDYN_MPI_CHECK(MPI_Bcast(times_, 2, MPI_DOUBLE, 0, comm_.get()));
}

// Row `row` of /spectrum from the last solve, and its line.
void SpectrumRun::record(RunFile& file, std::size_t row) {
  const std::int64_t t = layers_[row];
  if (out_.nev == 0) {  // the first solve of this process fixes nev (restored runs: the same deck, the same nev)
    out_.nev = r_.nev;
    out_.vectors = p_.eigen.vectors;
    out_.left = p_.eigen.left;
    RunGroup g = file.group("spectrum");
    g.attribute("eps_type", r_.method);
    g.attribute("residual_definition", r_.residual_definition);
  }
  out_.write(file, row, t, r_, times_[0], times_[1], comm_.root(), rows_, comm_.rank());
  double worst = 0;
  for (double e : r_.residual) worst = std::max(worst, e);
  const double l1 = r_.converged > 0 ? std::hypot(r_.re[0], r_.im[0]) : nan;
  const double elapsed = MPI_Wtime() - start_;
  const double remaining = elapsed / static_cast<double>(row + 1) * static_cast<double>(layers_.size() - row - 1);
  std::string angle;
  if (r_.complex_leading) angle = " (pair, angle " + std::to_string(std::atan2(r_.im[0], r_.re[0])) + ")";
  char line[512];
  std::snprintf(line, sizeof line,
                "layer %lld (%zu/%zu): %d/%d converged, |l1| = %.6g%s, gap = %.4g, max residual %.1e, %.2f s "
                "(build %.2f s), elapsed %s, remaining %s",
                static_cast<long long>(t), row + 1, layers_.size(), r_.converged, r_.nev, l1, angle.c_str(), r_.gap,
                worst, times_[0], times_[1], format_seconds(elapsed).c_str(), format_seconds(remaining).c_str());
  comm_.print(line);
}

// What the run was: solver, operator, settings, source. nev is the series' (the first solve of this process fixed
// it, -eps_nev may have changed the deck's; a continued run solves at least one layer, checkpoints coming before
// the last step).
void SpectrumRun::finish(RunFile& file) {
  RunGroup g = file.group("spectrum");
  g.attribute("solver", solver_);
  g.attribute("operator", solver_ == "lapack" ? std::string("dense") : p_.op);
  g.attribute("which", which_name(p_.eigen.which));
  g.attribute("nev", static_cast<std::int64_t>(out_.nev));
  g.attribute("d", static_cast<std::int64_t>(source_.d()));
  g.attribute("residual", static_cast<std::int64_t>(p_.eigen.residual));
  g.attribute("tol", p_.eigen.tol);
  g.attribute("shared", static_cast<std::int64_t>(source_.shared()));
  g.attribute("layers_total", source_.layers());
  g.attribute("source", source_.describe());
}

DeckSchema SpectrumStudy::schema() {
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

SpectrumParams spectrum_params(const Deck& deck) {
  SpectrumParams p;
  EigenSettings& s = p.eigen;
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
  p.solver = deck.get_text("spectrum.solver");
  p.op = deck.get_text("spectrum.operator");
  p.layers = deck.get_text("spectrum.layers");
  p.dense_max = deck.get_int("spectrum.dense_max");
  return p;
}

SpectrumStudy::SpectrumStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), p_(spectrum_params(deck)), source_(weights_from_deck(deck, comm.get())), d_(source_->d()),
      total_layers_(source_->layers()), layers_(layers_of(p_.layers, total_layers_, source_->shared())) {
  const EigenSettings& s = p_.eigen;
  if (s.nev > d_)
    throw InputError("deck key 'spectrum.nev' = " + std::to_string(s.nev) + " exceeds d = " + std::to_string(d_));
  solver_ = use_krylov(p_.solver, d_, p_.dense_max) ? "krylovschur" : "lapack";
  if (solver_ == "krylovschur" && s.ncv > 0 && (s.ncv <= s.nev || s.ncv > d_))
    throw InputError("deck key 'spectrum.ncv' = " + std::to_string(s.ncv) + " must lie in (nev = " +
                     std::to_string(s.nev) + ", d = " + std::to_string(d_) + "]");
}

SpectrumStudy::~SpectrumStudy() = default;

MemoryEstimate SpectrumStudy::memory() const {
  // Per rank: the layer's rows of V and O (shell) or of F (dense), LAPACK's gathered F with its
  // eigenvectors on rank 0, the Krylov basis, the stored vectors.
  const EigenSettings& s = p_.eigen;
  const double dd = d_, width = static_cast<double>(source_->heads()) * source_->head_dim(), P = comm_.size();
  const double ncv = s.ncv > 0 ? s.ncv : std::max(2.0 * s.nev, s.nev + 15.0);
  MemoryEstimate memory;
  if (solver_ == "lapack") memory.add("LAPACK: F, eigenvectors and work [d, d] x 5 (rank 0)", 5 * dd * dd);
  else if (p_.op == "dense") memory.add("distributed F [d/P, d] and a block of V", dd * dd / P + 2 * width * dd / P);
  else memory.add("V, O rows [D/P, d] + [d/P, D]", 2 * width * dd / P);
  if (solver_ != "lapack") memory.add("Krylov basis [ncv, d/P]", ncv * dd / P);
  memory.add("layer weights read per layer [D, d] x 4", 4 * width * dd / P);
  return memory;
}

RunState& SpectrumStudy::setup() {
  state_ = std::make_unique<SpectrumRun>(comm_, p_, *source_, layers_, solver_);
  return *state_;
}

std::string SpectrumStudy::banner() const {
  const EigenSettings& s = p_.eigen;
  char line[512];
  std::snprintf(line, sizeof line, "tokdyn spectrum: %s; %zu layer%s of %lld%s; %s%s, nev %d, %s%s",
                source_->describe().c_str(), layers_.size(), layers_.size() == 1 ? "" : "s",
                static_cast<long long>(total_layers_), source_->shared() ? " (shared weights: one solve)" : "",
                solver_.c_str(), solver_ == "krylovschur" ? (" (" + p_.op + ")").c_str() : "", s.nev,
                which_name(s.which).c_str(), s.residual ? ", I + F" : "");
  return line;
}

}  // namespace tokdyn
