#include "tokdyn/studies/power_study.hpp"

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/io/token_file.hpp"
#include "tokdyn/io/vector_file.hpp"
#include "tokdyn/power/alignment.hpp"
#include "tokdyn/power/embedding_tokens.hpp"
#include "tokdyn/power/steering.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/spectral/dense_eigen.hpp"
#include "tokdyn/spectral/eigensolver.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {
namespace {

// What /power holds (io/outputs.hpp): declared here, beside the code that writes it.
constexpr OutputDecl kPowerOutputs[] = {
    {"power/angle", OutputType::real, "radians", "row",
     "arg lambda_1 in (-pi, pi], the rotation per layer on S for a complex pair; NaN when lambda_1 is real."},
    {"power/basis_first", OutputType::real, "1", "basis_vector, coordinate",
     "Orthonormal basis (two rows) of the plane of the first layer's v_1, v_2 (S itself for a complex pair; v_2 the "
     "real part of a complex second eigenvector)."},
    {"power/basis_last", OutputType::real, "1", "basis_vector, coordinate",
     "Orthonormal basis (two rows) of the plane of the last layer's v_1, v_2 (S itself for a complex pair; v_2 the "
     "real part of a complex second eigenvector)."},
    {"power/gamma_in_mean", OutputType::real, "1", "row",
     "Mean over tokens of the alignment of the layer's input x_i(t) with the same v_{1,t} (or plane S)."},
    {"power/gamma_mean", OutputType::real, "1", "row",
     "Mean over tokens of the alignment gamma_i = |<x_i(t+1), v_{1,t}>| / |x_i| (|P_S x_i| / |x_i| for a complex "
     "pair, S = span(Re v_1, Im v_1)) after the layer."},
    {"power/gamma_median", OutputType::real, "1", "row",
     "Median over tokens of the alignment gamma_i after the layer (as gamma_mean)."},
    {"power/gamma_q1", OutputType::real, "1", "row",
     "First quartile over tokens of the alignment gamma_i after the layer (linear interpolation between order "
     "statistics)."},
    {"power/gamma_q3", OutputType::real, "1", "row",
     "Third quartile over tokens of the alignment gamma_i after the layer (linear interpolation between order "
     "statistics)."},
    {"power/gap", OutputType::real, "1", "row",
     "Spectral gap of the layer's acting matrix, 1 - |lambda_2|/|lambda_1| (1 - |lambda_3|/|lambda_1| for a complex "
     "pair)."},
    {"power/lambda1_abs", OutputType::real, "1", "row",
     "Modulus |lambda_1| of the leading eigenvalue of the layer's acting matrix."},
    {"power/lambda1_im", OutputType::real, "1", "row",
     "Imaginary part of lambda_1 of the layer's acting matrix (positive for a complex pair, 0 when real)."},
    {"power/lambda1_re", OutputType::real, "1", "row",
     "Real part of the leading eigenvalue lambda_1 of the layer's acting matrix (F_t, or I + F_t with "
     "power.residual)."},
    {"power/lambda2_abs", OutputType::real, "1", "row",
     "Modulus of the first eigenvalue outside the leading one: |lambda_2| for a real lambda_1, |lambda_3| for a "
     "complex pair."},
    {"power/layer", OutputType::integer, "layers", "row",
     "Layer count t + 1 of each row: row t holds the statistics of layer t (0-based), which maps the tokens x(t) to "
     "x(t+1), against that layer's leading eigenvector v_{1,t}."},
    {"power/pair", OutputType::integer, "1", "row",
     "1 when lambda_1 of the layer's acting matrix (F_t, or I + F_t with power.residual) is a complex pair, else 0."},
    {"power/plane_first", OutputType::real, "1", "layer, token, plane_coordinate",
     "Coordinates (<x_i, e_1>, <x_i, e_2>) of every token in the orthonormal basis basis_first (the plane of the "
     "first layer's v_1, v_2) after 0..L layers."},
    {"power/plane_last", OutputType::real, "1", "layer, token, plane_coordinate",
     "Coordinates (<x_i, e_1>, <x_i, e_2>) of every token in the orthonormal basis basis_last (the plane of the last "
     "layer's v_1, v_2) after 0..L layers."},
    {"power/rho", OutputType::real, "1", "row",
     "Fraction of tokens whose alignment with v_{1,t} grows through the layer (decided on the sines: misalignment of "
     "x_i(t+1) below that of x_i(t))."},
    {"power/rotation", OutputType::real, "radians", "row",
     "Complex pair: mean over tokens of the phase advance arg(z_i(t+1)/z_i(t)) in (-pi, pi] in the eigen-coordinates "
     "of S; NaN when lambda_1 is real."},
    {"power/sin_mean", OutputType::real, "1", "row",
     "Mean over tokens of the misalignment after the layer, |x_i - P x_i| / |x_i| (the sine of the angle to "
     "span(v_1) or S)."},
    {"power@N", OutputType::integer, "1", "",
     "Number of tokens N (power.N, or the rows of power.token_file, or the count of power.token_ids)."},
    {"power@attention", OutputType::text, "", "", "Attention style of the layers, A^h (power.attention)."},
    {"power@baseline", OutputType::real, "1", "",
     "Alignment of a random direction with a line, sqrt(2 / (pi d)) ~ E|<x, v>| for x uniform on S^{d-1} (large d): "
     "gamma of tokens unrelated to v_1."},
    {"power@baseline_plane", OutputType::real, "1", "",
     "Alignment of a random direction with a plane, sqrt(pi / (2 d)) ~ E|P_S x| for x uniform on S^{d-1}: the "
     "baseline of gamma for a complex pair."},
    {"power@causal", OutputType::integer, "1", "", "1 when attention masks j > i (power.causal), else 0."},
    {"power@circulating_layers", OutputType::integer, "layers", "",
     "Consecutive layers, up to the last, in which every token lay within angle tol of the plane of the last layer's "
     "v_1, v_2 and moved (final state limit_cycle when >= power.window)."},
    {"power@d", OutputType::integer, "1", "", "Model width d."},
    {"power@error_ratio", OutputType::real, "1", "",
     "Fitted per-layer decay of the misalignment: exp of the least-squares slope of log sin_mean against the layer "
     "over the later half of the layers with sin_mean > 1e-12 (NaN with fewer than 3)."},
    {"power@error_ratio_closed_form", OutputType::real, "1", "",
     "Closed form of error_ratio from the last layer's acting matrix: |lambda_2|/|lambda_1| (|lambda_3|/|lambda_1| "
     "for a complex pair); NaN when |lambda_1| = 0."},
    {"power@residual", OutputType::integer, "1", "",
     "1 when the layer adds the residual x_i (power.residual, r = 1: the acting matrix is I + F_t), else 0."},
    {"power@rho_mean", OutputType::real, "1", "", "Mean of rho over the L layers."},
    {"power@shared", OutputType::integer, "1", "",
     "1 when one set of weights serves every layer (ALBERT, synthetic.shared = true), else 0."},
    {"power@state", OutputType::text, "", "",
     "Final state of the tokens (doc/science.md section 7.4): consensus, bipartite, limit_cycle or none."},
    {"power@tol", OutputType::real, "radians", "",
     "Tolerance tol of the final-state detection (power.tol): a token moves in a layer when |x_i(t+1) - x_i(t)| > "
     "tol, and the final states need every token within angle tol of the mean direction (consensus), of +-m "
     "(bipartite) or of the plane (limit_cycle)."},
    {"power@weights", OutputType::text, "", "", "The weight source in one line: format, file, shape."},
    {"power@window", OutputType::integer, "layers", "", "Layers W a limit cycle must persist (power.window)."},
};
const DeclaredOutputs kPowerDeclared("power", kPowerOutputs);

// What /steer holds (written with steer.target only).
constexpr OutputDecl kSteerOutputs[] = {
    {"steer/alignment_mean", OutputType::real, "1", "strength",
     "Mean over tokens of |<x_i, u>| / |x_i| after the steered layers, which start from the tokens the unsteered run "
     "fed into them (u the unit target steer/target)."},
    {"steer/alignment_min", OutputType::real, "1", "strength",
     "Minimum over tokens of |<x_i, u>| / |x_i| after the steered layers."},
    {"steer/alpha", OutputType::real, "1", "strength",
     "Rank-1 steering amplitude alpha = c |lambda_1(F_L)| of the last steered layer, O'_L = O_L + alpha u "
     "(pinv(V_L^T) u)^T."},
    {"steer/eigvec_alignment", OutputType::real, "1", "strength",
     "Alignment |<v_1(F'_L), u>| of the steered last layer's leading eigenvector with the target (|P_S u| for a "
     "complex pair)."},
    {"steer/gap", OutputType::real, "1", "strength",
     "Spectral gap of F'_L, 1 - |lambda_2|/|lambda_1| (1 - |lambda_3|/|lambda_1| for a complex pair)."},
    {"steer/lambda1_im", OutputType::real, "1", "strength",
     "Imaginary part of the leading eigenvalue of F'_L (positive for a complex pair, 0 when real)."},
    {"steer/lambda1_re", OutputType::real, "1", "strength",
     "Real part of the leading eigenvalue of the steered last layer's matrix F'_L (without the residual)."},
    {"steer/strength", OutputType::real, "1", "strength",
     "Steering strength c of each sweep point (steer.strengths, or steer.strength)."},
    {"steer/target", OutputType::real, "1", "coordinate",
     "The unit steering target u (steer.target: an HDF5 dataset, a token's embedding or the axis e_K), normalised."},
    {"steer@lambda1_abs", OutputType::real, "1", "",
     "|lambda_1(F_L)| of the unsteered last layer (F_L itself, without the residual): alpha = c |lambda_1(F_L)|."},
    {"steer@layers", OutputType::text, "", "", "Layers whose output matrix is steered (steer.layers): last, or all."},
    {"steer@target_spec", OutputType::text, "", "",
     "The steering target as given (steer.target): FILE.h5:/dataset, token:ID or axis:K."},
    {"steer@target_v1_alignment", OutputType::real, "1", "",
     "Alignment |<v_1(F_L), u>| of the unsteered last layer's leading eigenvector with the target (|P_S u| for a "
     "complex pair; F_L without the residual)."},
    {"steer@unsteered_alignment_mean", OutputType::real, "1", "",
     "Mean over tokens of |<x_i, u>| / |x_i| after the last layer of the unsteered run."},
    {"steer@value_rank", OutputType::integer, "1", "",
     "Numerical rank of the last layer's V_L [D, d] (singular values below 1e-12 s_max count as zero); rank d: F'_L "
     "= F_L + alpha u u^T exactly."},
};
const DeclaredOutputs kSteerDeclared("power", kSteerOutputs);

// The rows [N, d] of a token file, read after checking its shape against the model width.
std::vector<double> file_tokens(const std::string& path, const std::string& dataset, const Comm& comm, int d,
                                Partition& partition) {
  if (path.empty()) throw InputError("power.tokens = file needs power.token_file");
  partition = Partition(token_file_rows(path, dataset, comm.get(), d), comm.size());
  std::vector<double> x(partition.count(comm.rank()) * d);
  read_initial_tokens(path, dataset, comm.get(), partition, d, x.data());
  return x;
}

// This rank's initial tokens [n_local, d], on the unit sphere; partition set to their number.
std::vector<double> initial_power_tokens(const PowerParams& p, const Comm& comm, const WeightSource& source, int d,
                                         Partition& partition) {
  if (p.tokens == "file") return file_tokens(p.token_file, p.token_dataset, comm, d, partition);
  if (p.tokens == "embedding") {
    if (p.token_ids.empty()) throw InputError("power.tokens = embedding needs power.token_ids (a comma list of token ids)");
    return embedding_tokens(p.token_ids, comm, source, d, partition);
  }
  // random: iid uniform on S^{d-1}, token i from (seed, i) alone
  partition = Partition(p.n, comm.size());
  const std::int64_t begin = partition.begin(comm.rank()), n = partition.count(comm.rank());
  std::vector<double> x(n * d);
  const RandomStream stream(p.seed, Purpose::power_tokens);
  for (std::int64_t i = 0; i < n; ++i) stream.normals(0, static_cast<std::uint64_t>(begin + i), &x[i * d], d);
  normalize_rows(x.data(), n, d);
  return x;
}

// steer.target: FILE.h5:/dataset (d values), token:ID (that token's embedding) or axis:K (the coordinate vector
// e_K, a target that needs no file). Unit length.
std::vector<double> steering_target(const std::string& target, const Comm& comm, const WeightSource& source, int d) {
  const std::string what = "steer.target '" + target + "'";
  std::vector<double> u;
  if (target.rfind("axis:", 0) == 0) {
    const std::vector<std::int64_t> k = parse_index_list("steer.target", target.substr(5), "a coordinate index");
    if (k.size() != 1 || k[0] >= d)
      throw InputError(what + ": axis:K takes one coordinate K in [0, d = " + std::to_string(d) + ")");
    u.assign(d, 0.0);
    u[k[0]] = 1;
  } else if (target.rfind("token:", 0) == 0) {
    const std::vector<std::int64_t> id = parse_index_list("steer.target", target.substr(6), "a token id");
    if (id.size() != 1) throw InputError(what + ": token:ID takes one token id");
    if (!source.has_embedding())
      throw InputError(what + " needs a model with a token embedding; " + source.describe() + " has none");
    u = read_collectively(comm.get(), [&] { return source.embedding(id); });
  } else {
    const std::size_t colon = target.rfind(":/");
    if (colon == std::string::npos || colon == 0)
      throw InputError(what + " is none of FILE.h5:/dataset, token:ID, axis:K");
    u = read_vector_file(target.substr(0, colon), target.substr(colon + 1), what, comm.get(), d);
  }
  return unit_target(u, d, what);
}

// Coordinates (<x_i, e_1>, <x_i, e_2>) of this rank's tokens in an orthonormal plane [2, d]: [n_local, 2].
std::vector<double> plane_coordinates(const std::vector<double>& plane, const std::vector<double>& x, int d) {
  const std::size_t n = x.size() / d;
  std::vector<double> c(2 * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 2; ++k)
      for (int a = 0; a < d; ++a) c[2 * i + k] += x[i * d + a] * plane[static_cast<std::size_t>(k) * d + a];
  return c;
}

// Error ratio per layer: exp of the slope of log sin_mean over the later half of the layers where it lies
// above the round-off floor 1e-12 (NaN with fewer than 3 such layers).
double fitted_error_ratio(const std::vector<double>& sin_mean) {
  std::vector<double> ts, ys;
  for (std::size_t t = 0; t < sin_mean.size(); ++t)
    if (sin_mean[t] > 1e-12) ts.push_back(double(t)), ys.push_back(std::log(sin_mean[t]));
  ts.erase(ts.begin(), ts.begin() + static_cast<std::ptrdiff_t>(ts.size() / 2));
  ys.erase(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(ys.size() / 2));
  return ts.size() >= 3 ? std::exp(least_squares_slope(ts, ys)) : NAN;
}

}  // namespace

// The model's layers as the run reads them. Shared weights are read once and never copied; layer-varying
// ones layer by layer. Every rank reads every layer it uses, and all agree on the reads (NaN or Inf in a
// tensor stops every rank).
class PowerLayers {
 public:
  PowerLayers(const Comm& comm, const WeightSource& source, const PowerParams& p, bool krylov)
      : comm_(comm), source_(source), p_(p), krylov_(krylov), first_(read(0)) {}

  LayerWeights read(std::int64_t t) const {
    return read_collectively(comm_.get(), [&] { return source_.layer(t); });
  }
  const LayerWeights& first() const { return first_; }
  bool shared() const { return source_.shared(); }
  // Layer t: the first layer's weights, or layer t read into slot.
  const LayerWeights& weights(std::int64_t t, std::optional<LayerWeights>& slot) const {
    return shared() || t == 0 ? first_ : slot.emplace(read(t));
  }

  // Each layer's v_1: dense on every rank, or Krylov-Schur on the operator O (V x) for large d (which reads
  // only its rows of the layer). w: the layer when the caller holds it already.
  LeadingDirection lead(std::int64_t t, const LayerWeights* w, bool residual) const {
    if (krylov_) {
      try {
        return leading_direction_krylov(comm_.get(), source_, t, residual);
      } catch (const InputError& e) {  // collective: every rank sees the same non-convergence
        if (p_.eigensolver != "auto") throw;
        comm_.print("tokdyn power: " + std::string(e.what()) + "; LAPACK for this layer");
      }
    }
    std::optional<LayerWeights> slot;
    return leading_direction(source_.d(), layer_matrix(w ? *w : weights(t, slot)), residual);
  }

 private:
  const Comm& comm_;
  const WeightSource& source_;
  const PowerParams& p_;
  bool krylov_;
  const LayerWeights first_;
};

// The power-method layers as a run state: tokens x [n_local, d] through layer t per step; per layer the
// alignment statistics with the layer's leading direction (kept as series, written at the end), the token
// coordinates in the planes of the first and last layers' v_1, v_2 (a series row per layer) and snapshots.
// At the end: the final state, the fits and the steering sweep.
class PowerRun : public RunState {
 public:
  PowerRun(const Comm& comm, const PowerParams& p, const WeightSource& source, const PowerLayers& model,
           const Partition& partition, std::vector<double> x, std::vector<double> u)
      : comm_(comm), p_(p), source_(source), model_(model), partition_(partition), d_(source.d()),
        layers_(source.layers()), shared_(source.shared()),
        lead_first_(model.lead(0, &model.first(), p.layer.residual)),
        lead_last_(shared_ || layers_ == 1 ? lead_first_ : model.lead(layers_ - 1, nullptr, p.layer.residual)),
        layer_(comm.get(), partition, d_, model.first().width(), p.layer),
        detector_(comm.get(), partition, d_, lead_last_.plane, p.tol, p.window), x_(std::move(x)), first_input_(x_),
        u_(std::move(u)), start_(MPI_Wtime()) {}

  std::int64_t steps() const override { return layers_; }
  double state_bytes() const override { return 8.0 * static_cast<double>(partition_.n_global) * d_; }

  void begin(RunFile& file) override {
    record_planes(file, 0);
    file.write_snapshot(0, 0, x_.data(), partition_.begin(comm_.rank()), partition_.count(comm_.rank()));
  }

  std::int64_t advance(std::int64_t t) override {
    std::optional<LayerWeights> slot;
    const LayerWeights& w = model_.weights(t, slot);
    lead_ = (shared_ || t == 0) ? lead_first_ : t == layers_ - 1 ? lead_last_ : model_.lead(t, &w, p_.layer.residual);
    const std::vector<double> before = x_;
    if (t == layers_ - 1) last_input_ = x_;
    layer_.apply(w, t, x_.data());
    last_ = layer_alignment(comm_.get(), partition_, lead_, before.data(), x_.data());
    detector_.observe(before.data(), x_.data());
    const LayerAlignment& s = last_;
    index_.push_back(t + 1);
    pair_.push_back(lead_.pair ? 1 : 0);
    const double values[kSeries] = {s.gamma_mean, s.gamma_median, s.gamma_q1, s.gamma_q3, s.gamma_in_mean,
                                    s.sin_mean,   s.rho,          lead_.gap,  lead_.re,   lead_.im,
                                    lead_.modulus, lead_.next_modulus, s.rotation, lead_.pair ? lead_.angle() : NAN};
    for (int k = 0; k < kSeries; ++k) series_[k].push_back(values[k]);
    return t + 1;
  }

  std::string observe(std::int64_t t, RunFile& file) override {
    record_planes(file, t);
    if ((p_.snapshot_every > 0 && t % p_.snapshot_every == 0) || t == layers_)
      file.write_snapshot(t, double(t), x_.data(), partition_.begin(comm_.rank()), partition_.count(comm_.rank()));
    const LayerAlignment& s = last_;
    char line[400];
    // The eigenvalues are those of the matrix the layer applies: I + F with the residual, else F.
    const char* acting = p_.layer.residual ? "I + F" : "F";
    int n = std::snprintf(line, sizeof line,
                          "layer %lld/%lld: gamma %.6f [q1 %.4f, q3 %.4f], sin %.3e, rho %.3f, |lambda_1(%s)| %.5g, "
                          "gap(%s) %.4f",
                          static_cast<long long>(t), static_cast<long long>(layers_), s.gamma_mean, s.gamma_q1,
                          s.gamma_q3, s.sin_mean, s.rho, acting, lead_.modulus, acting, lead_.gap);
    if (lead_.pair)
      n += std::snprintf(line + n, sizeof line - n, ", rotation %.6f (arg lambda_1 %.6f)", s.rotation, lead_.angle());
    std::snprintf(line + n, sizeof line - n, " [%.1f s]", MPI_Wtime() - start_);
    record_line_ = line;
    return std::isfinite(s.gamma_mean) ? "" : "the alignment gamma is NaN after layer " + std::to_string(t);
  }

  std::string record_line() const override { return record_line_; }

  bool finite() const override {
    for (double v : x_)
      if (!std::isfinite(v)) return false;
    return true;
  }
  std::string nonfinite_message(std::int64_t t) const override {
    return "NaN or Inf in the token state after layer " + std::to_string(t);
  }

  void save(CheckpointWriter& out) const override {
    out.rows("X", x_.data(), partition_, d_);
    out.integers("layer", index_);
    out.integers("pair", pair_);
    for (int k = 0; k < kSeries; ++k) out.values(kNames[k], series_[k]);
    out.attribute("circulating_layers", detector_.circulating_layers());
    out.attribute("settled", std::int64_t(detector_.settled() ? 1 : 0));
  }

  void restore(const CheckpointReader& in, RunFile& file) override {
    in.rows("X", x_.data(), partition_, d_);
    const std::size_t layers = static_cast<std::size_t>(in.identity().step);  // one entry per layer done
    index_ = in.integers("layer", layers);
    pair_ = in.integers("pair", layers);
    for (int k = 0; k < kSeries; ++k) series_[k] = in.values(kNames[k], layers);
    detector_.restore(in.int_attribute("circulating_layers"), in.int_attribute("settled") != 0);
  }

  void finish(RunFile& file) override {
    write_final_state(file);
    if (!u_.empty()) steer(file);
  }

 private:
  // Every layer's series, written at the end.
  static constexpr int kSeries = 14;
  static constexpr const char* kNames[kSeries] = {
      "gamma_mean", "gamma_median", "gamma_q1",   "gamma_q3",    "gamma_in_mean", "sin_mean",    "rho",
      "gap",        "lambda1_re",   "lambda1_im", "lambda1_abs", "lambda2_abs",   "rotation",    "angle"};
  static constexpr int kGammaMean = 0, kSinMean = 5, kRho = 6, kLambda1Abs = 10;

  // The coordinates of this rank's tokens in the planes of the first and last layers: a series row.
  void record_planes(RunFile& file, std::int64_t row) {
    const hsize_t n = static_cast<hsize_t>(partition_.n_global);
    const std::int64_t begin = partition_.begin(comm_.rank()), count = partition_.count(comm_.rank());
    const std::vector<double> a = plane_coordinates(lead_first_.plane, x_, d_), b = plane_coordinates(lead_last_.plane, x_, d_);
    RunGroup g = file.group("power");
    g.write_row("plane_first", {n, 2}, row, a.data(), begin, count);
    g.write_row("plane_last", {n, 2}, row, b.data(), begin, count);
  }

  void write_final_state(RunFile& file);
  void write_settings(RunGroup& g) const;
  void steer(RunFile& file);
  SteeringRun steering_layers() const;
  void write_steering(RunFile& file, const SteeringRun& steer, const std::vector<SteeringPoint>& points) const;

  const Comm& comm_;
  const PowerParams& p_;
  const WeightSource& source_;
  const PowerLayers& model_;
  Partition partition_;
  int d_;
  std::int64_t layers_;
  bool shared_;
  const LeadingDirection lead_first_, lead_last_;
  PowerLayer layer_;
  FinalStateDetector detector_;
  std::vector<double> x_, first_input_, last_input_;  // [n_local, d]: now, before layer 0, before the last layer
  std::vector<double> u_;                              // [d]: the steering target (empty: no steering)
  double start_;
  std::string record_line_;  // of the last observe()
  LeadingDirection lead_;
  LayerAlignment last_{};
  std::vector<std::int64_t> index_, pair_;
  std::vector<double> series_[kSeries];
};

// The final state, the series, the error ratio against the closed form |lambda_2| / |lambda_1|
// (|lambda_3| for a pair) of the last layer, and the summary line.
void PowerRun::write_final_state(RunFile& file) {
  RunGroup g = file.group("power");
  const std::string final_state = detector_.classify(x_.data());
  const double error_ratio = fitted_error_ratio(series_[kSinMean]);
  const double closed_ratio = lead_last_.modulus > 0 ? lead_last_.next_modulus / lead_last_.modulus : NAN;
  g.write_integers("layer", index_);
  g.write_integers("pair", pair_);
  for (int k = 0; k < kSeries; ++k) g.write(kNames[k], series_[k]);
  g.write("basis_first", lead_first_.plane, {2, hsize_t(d_)});
  g.write("basis_last", lead_last_.plane, {2, hsize_t(d_)});
  g.attribute("state", final_state);
  write_settings(g);
  g.attribute("circulating_layers", detector_.circulating_layers());
  g.attribute("baseline", random_alignment_baseline(d_, false));
  g.attribute("baseline_plane", random_alignment_baseline(d_, true));
  g.attribute("error_ratio", error_ratio);
  g.attribute("error_ratio_closed_form", closed_ratio);
  double rho_avg = 0;
  for (double r : series_[kRho]) rho_avg += r / layers_;
  g.attribute("rho_mean", rho_avg);
  char line[400];
  std::snprintf(line, sizeof line,
                "final state: %s; gamma %.6f (baseline %.4f); mean rho %.4f; error ratio per layer %.6f "
                "(|lambda_2|/|lambda_1| of the last layer %.6f); %.2f s",
                final_state.c_str(), series_[kGammaMean].back(), random_alignment_baseline(d_, lead_last_.pair),
                rho_avg, error_ratio, closed_ratio, MPI_Wtime() - start_);
  comm_.print(line);
}

// What the run was: the layer, the source, the tokens, the detector's settings.
void PowerRun::write_settings(RunGroup& g) const {
  g.attribute("attention", p_.layer.attention);
  g.attribute("causal", std::int64_t(p_.layer.causal));
  g.attribute("residual", std::int64_t(p_.layer.residual));
  g.attribute("shared", std::int64_t(shared_));
  g.attribute("weights", source_.describe());
  g.attribute("N", partition_.n_global);
  g.attribute("d", std::int64_t(d_));
  g.attribute("tol", p_.tol);
  g.attribute("window", p_.window);
}

// The steered layers with |lambda_1(F_t)| of each: alpha_t is a multiple of it, of F_t itself (not I + F_t).
SteeringRun PowerRun::steering_layers() const {
  const bool every_layer = p_.steer_layers == "all";
  auto weights = [this](std::int64_t t) { return shared_ || t == 0 ? model_.first() : model_.read(t); };
  SteeringRun steer{weights, every_layer ? 0 : layers_ - 1, layers_, shared_, {}};
  for (std::int64_t t = steer.first; t < layers_; ++t) {
    if (shared_ && t > steer.first) {
      steer.lambda1_modulus.push_back(steer.lambda1_modulus.front());
      continue;
    }
    const double m = !p_.layer.residual ? series_[kLambda1Abs][t] : model_.lead(t, nullptr, false).modulus;
    steer.lambda1_modulus.push_back(m);
  }
  return steer;
}

// The sweep over the strengths c from the input of the first steered layer, a line per c.
void PowerRun::steer(RunFile& file) {
  const SteeringRun steer = steering_layers();
  const std::vector<SteeringPoint> points = steering_sweep(
      comm_.get(), layer_, steer, p_.steer_layers == "all" ? first_input_ : last_input_, u_, p_.strengths);
  for (const SteeringPoint& p : points) {
    char line[400];
    std::snprintf(line, sizeof line,
                  "steer c = %g (alpha %.4g): alignment with u mean %.6f min %.6f; lambda_1(F'_L) %.5g%+.5gi, gap "
                  "%.4f, |<v_1', u>| %.6f",
                  p.strength, p.alpha, p.alignment.mean, p.alignment.min, p.lambda1_re, p.lambda1_im, p.gap,
                  p.eigvec_alignment);
    comm_.print(line);
  }
  write_steering(file, steer, points);
}

// /steer: a value per sweep point, the target, and how the unsteered run and v_1 of the last layer align with it.
void PowerRun::write_steering(RunFile& file, const SteeringRun& steer, const std::vector<SteeringPoint>& points) const {
  RunGroup sg = file.group("steer");
  std::vector<double> c, alpha, mean, least, re, im, sgap, eig;
  for (const SteeringPoint& p : points) {
    c.push_back(p.strength), alpha.push_back(p.alpha), mean.push_back(p.alignment.mean);
    least.push_back(p.alignment.min), re.push_back(p.lambda1_re), im.push_back(p.lambda1_im), sgap.push_back(p.gap);
    eig.push_back(p.eigvec_alignment);
  }
  const std::pair<const char*, const std::vector<double>*> steer_series[] = {
      {"strength", &c},     {"alpha", &alpha},     {"alignment_mean", &mean}, {"alignment_min", &least},
      {"lambda1_re", &re}, {"lambda1_im", &im},   {"gap", &sgap},            {"eigvec_alignment", &eig}};
  for (const auto& [name, values] : steer_series) sg.write(name, *values);
  sg.write("target", u_);
  sg.attribute("target_spec", p_.target);
  sg.attribute("lambda1_abs", steer.lambda1_modulus.back());
  sg.attribute("layers", p_.steer_layers);
  sg.attribute("value_rank", std::int64_t(points.empty() ? 0 : points[0].value_rank));
  const TargetAlignment unsteered = target_alignment(comm_.get(), partition_, x_.data(), u_);
  sg.attribute("unsteered_alignment_mean", unsteered.mean);
  sg.attribute("target_v1_alignment", alignment(model_.lead(layers_ - 1, nullptr, false), u_.data()));
}

DeckSchema PowerStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "power.h5");
  add_tile_key(s);
  s.add_int("run.snapshot_every", 1, "tokens to /tokens/X every k layers (and the first and last); 0: first and last",
            0);
  add_weight_keys(s);
  s.add_choice("power.attention", "softmax", attention_styles().names(),
               "A^h, an attention style: softmax (row softmax of score_scale <Q_h x_i, K_h x_j>), uniform (1/n), "
               "identity, or any other registered style");
  s.add_bool("power.causal", false, "mask j > i (GPT-style): softmax and uniform over j <= i");
  s.add_bool("power.residual", true, "x_i + attention (r = 1, the acting matrix is I + F) or attention alone (r = 0)");
  s.add_choice("power.tokens", "random", {"random", "file", "embedding"},
               "initial tokens: iid uniform on the sphere, an HDF5 file, or rows of the model's embedding");
  s.add_int("power.N", 64, "tokens N (power.tokens = random)", 1, 1 << 24);
  s.add_file("power.token_file", "", "HDF5 file with the initial tokens [N, d] (power.tokens = file)");
  s.add_text("power.token_dataset", "X", "dataset [N, d] in power.token_file");
  s.add_text("power.token_ids", "", "comma list of token ids whose embeddings are the tokens (power.tokens = embedding)");
  s.add_choice("power.eigensolver", "auto", {"auto", "lapack", "krylovschur"},
               "leading eigenpairs of each layer: LAPACK dgeev on F (every rank), Krylov-Schur on the matrix-free "
               "operator, or auto (LAPACK up to d = spectrum.dense_max, Krylov-Schur above with LAPACK where it does "
               "not converge)");
  add_dense_max_key(s);
  s.add_real("power.tol", 1e-4, "tolerance (radians) of the final-state detection", 0.0, 1.0, true);
  s.add_int("power.window", 10, "layers a limit cycle must persist", 1);
  s.add_text("steer.target", "",
             "steering target u: empty (no steering), FILE.h5:/dataset (d values), token:ID (its embedding), axis:K (e_K)");
  s.add_real("steer.strength", 20.0, "c: alpha = c |lambda_1(F_L)| (when steer.strengths is empty)", 0.0);
  s.add_text("steer.strengths", "", "comma list of c values for a sweep (replaces steer.strength)");
  s.add_choice("steer.layers", "last", {"last", "all"},
               "layers whose output matrix is steered: the last (the construction of doc/science.md section 7.4), "
               "or every layer (what changing the one O of a shared-weight model does)");
  return s;
}

PowerParams power_params(const Deck& deck) {
  PowerParams p;
  p.layer.attention = deck.get_text("power.attention");
  p.layer.causal = deck.get_bool("power.causal");
  p.layer.residual = deck.get_bool("power.residual");
  p.layer.tile = static_cast<int>(deck.get_int("run.tile"));
  p.tokens = deck.get_text("power.tokens");
  p.n = deck.get_int("power.N");
  p.token_file = deck.get_text("power.token_file");
  p.token_dataset = deck.get_text("power.token_dataset");
  if (p.tokens == "embedding")
    p.token_ids = parse_index_list("power.token_ids", deck.get_text("power.token_ids"), "a token id");
  p.eigensolver = deck.get_text("power.eigensolver");
  p.dense_max = deck.get_int("spectrum.dense_max");
  p.tol = deck.get_real("power.tol");
  p.window = deck.get_int("power.window");
  p.target = deck.get_text("steer.target");
  if (!p.target.empty()) {
    p.strengths = parse_real_list("steer.strengths", deck.get_text("steer.strengths"));
    if (p.strengths.empty()) p.strengths.push_back(deck.get_real("steer.strength"));
  }
  p.steer_layers = deck.get_text("steer.layers");
  p.snapshot_every = deck.get_int("run.snapshot_every");
  p.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  return p;
}

PowerStudy::PowerStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), p_(power_params(deck)), source_(weights_from_deck(deck, comm.get())), d_(source_->d()),
      layers_(source_->layers()) {
  if (d_ < 2) throw InputError(source_->describe() + ": the model width must be at least 2");
  if (layers_ < 1) throw InputError(source_->describe() + " has no layers");
  krylov_ = use_krylov(p_.eigensolver, d_, p_.dense_max);
}

PowerStudy::~PowerStudy() = default;

MemoryEstimate PowerStudy::memory() const {
  // A layer's weights (two held at once), dgeev's F, vectors and work on every rank, the tokens.
  const double dd = d_, width = static_cast<double>(source_->heads()) * source_->head_dim();
  const double n = p_.tokens == "random" ? static_cast<double>(p_.n) : 1e4;
  MemoryEstimate memory;
  memory.add("layer weights Q, K, V, O [D, d] x 4, two layers", 8 * width * dd);
  if (!krylov_) memory.add("dense eigenproblem: F, eigenvectors, work [d, d] x 5", 5 * dd * dd);
  memory.add("tokens and step buffers [N/P, d] x 8", 8 * n / comm_.size() * dd);
  return memory;
}

RunState& PowerStudy::setup() {
  Partition partition;
  std::vector<double> x = initial_power_tokens(p_, comm_, *source_, d_, partition);  // [n_local, d]
  n_ = partition.n_global;
  std::vector<double> u;  // [d]
  if (!p_.target.empty()) u = steering_target(p_.target, comm_, *source_, d_);
  model_ = std::make_unique<PowerLayers>(comm_, *source_, p_, krylov_);
  state_ = std::make_unique<PowerRun>(comm_, p_, *source_, *model_, partition, std::move(x), std::move(u));
  return *state_;
}

std::string PowerStudy::banner() const {
  char line[400];
  std::snprintf(line, sizeof line, "tokdyn power: %s; %s attention%s%s, N = %lld, L = %lld",
                source_->describe().c_str(), p_.layer.attention.c_str(), p_.layer.causal ? " (causal)" : "", p_.layer.residual ? " + residual" : "",
                static_cast<long long>(n_), static_cast<long long>(layers_));
  return line;
}

}  // namespace tokdyn
