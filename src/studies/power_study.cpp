#include "tokdyn/studies/power_study.hpp"

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "tokdyn/core/error.hpp"
#include "tokdyn/core/random.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/io/token_file.hpp"
#include "tokdyn/power/alignment.hpp"
#include "tokdyn/power/steering.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/spectral/dense_eigen.hpp"
#include "tokdyn/spectral/eigensolver.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {
namespace {

// The rows [N, d] of a token file, read after checking its shape against the model width.
std::vector<double> file_tokens(const std::string& path, const std::string& dataset, const Comm& comm, int d,
                                Partition& partition) {
  if (path.empty()) throw InputError("power.tokens = file needs power.token_file");
  std::vector<hsize_t> shape;
  {
    h5::Handle f = h5::open_input_file(path, comm.get(), "token file");
    shape = h5::dims(h5::open_input_dataset(f, dataset, "token file", path));
  }
  if (shape.size() != 2 || shape[1] != hsize_t(d) || shape[0] == 0)
    throw InputError("token file '" + path + "': dataset '" + dataset + "' must be [N, " + std::to_string(d) +
                     "] (N tokens of the model width d = " + std::to_string(d) + ")");
  partition = Partition(static_cast<std::int64_t>(shape[0]), comm.size());
  std::vector<double> x(partition.count(comm.rank()) * d);
  read_initial_tokens(path, dataset, comm.get(), partition, d, x.data());
  return x;
}

// The embedding rows [n_local, d] of token ids, normalised; every rank agrees on a zero or non-finite row.
std::vector<double> embedding_tokens(const std::vector<std::int64_t>& ids, const Comm& comm,
                                     const WeightSource& source, int d, Partition& partition) {
  if (ids.empty()) throw InputError("power.tokens = embedding needs power.token_ids (a comma list of token ids)");
  if (!source.has_embedding())
    throw InputError("power.token_ids needs a model with a token embedding; " + source.describe() + " has none");
  partition = Partition(static_cast<std::int64_t>(ids.size()), comm.size());
  const std::int64_t begin = partition.begin(comm.rank()), n = partition.count(comm.rank());
  std::vector<double> x = read_collectively(comm.get(), [&] {
    return n > 0 ? source.embedding(std::vector<std::int64_t>(ids.begin() + begin, ids.begin() + begin + n))
                 : std::vector<double>();
  });
  std::int64_t bad = -1;
  for (std::int64_t i = 0; i < n && bad < 0; ++i) {
    double s = 0;
    for (int a = 0; a < d; ++a) s += x[i * d + a] * x[i * d + a];
    if (!(s > 0) || !std::isfinite(s)) bad = ids[begin + i];
  }
  require_all(comm.get(), bad < 0, "the embedding of token id " + std::to_string(bad) + " is zero or not finite");
  normalize_rows(x.data(), n, d);
  return x;
}

// This rank's initial tokens [n_local, d], on the unit sphere; partition set to their number.
std::vector<double> initial_power_tokens(const PowerParams& p, const Comm& comm, const WeightSource& source, int d,
                                         Partition& partition) {
  if (p.tokens == "file") return file_tokens(p.token_file, p.token_dataset, comm, d, partition);
  if (p.tokens == "embedding") return embedding_tokens(p.token_ids, comm, source, d, partition);
  // random: iid uniform on S^{d-1}, token i from (seed, i) alone
  partition = Partition(p.n, comm.size());
  const std::int64_t begin = partition.begin(comm.rank()), n = partition.count(comm.rank());
  std::vector<double> x(n * d);
  const RandomStream stream(p.seed, Purpose::power_tokens);
  for (std::int64_t i = 0; i < n; ++i) stream.normals(0, static_cast<std::uint64_t>(begin + i), &x[i * d], d);
  normalize_rows(x.data(), n, d);
  return x;
}

// The d values of dataset `dataset` in the HDF5 file `path` (a steering target; `what` names it in errors).
std::vector<double> file_target(const std::string& path, const std::string& dataset, const std::string& what,
                                const Comm& comm, int d) {
  h5::Handle f = h5::open_input_file(path, comm.get(), what + ": file");
  h5::Handle data = h5::open_input_dataset(f, dataset, what + ": file", path);
  std::size_t count = 1;
  for (hsize_t n : h5::dims(data)) count *= n;
  if (count != static_cast<std::size_t>(d))
    throw InputError(what + " has " + std::to_string(count) + " entries, the model width is d = " + std::to_string(d));
  std::vector<double> u(count);
  const std::vector<hsize_t> shape = h5::dims(data);
  h5::read_slab(data, H5T_NATIVE_DOUBLE, u.data(), 0, shape.empty() ? 1 : shape[0]);
  return u;
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
    u = file_target(target.substr(0, colon), target.substr(colon + 1), what, comm, d);
  }
  return unit_target(u, d, what);
}

void write_ints(hid_t group, const std::string& name, const std::vector<std::int64_t>& values, const Comm& comm) {
  h5::Handle d = h5::create_dataset(group, name, H5T_STD_I64LE, {hsize_t(values.size())});
  h5::write_slab(d, H5T_NATIVE_INT64, values.data(), 0, comm.root() ? values.size() : 0);
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
    int n = std::snprintf(line, sizeof line,
                          "layer %lld/%lld: gamma %.6f [q1 %.4f, q3 %.4f], sin %.3e, rho %.3f, |lambda_1| %.5g, gap %.4f",
                          static_cast<long long>(t), static_cast<long long>(layers_), s.gamma_mean, s.gamma_q1,
                          s.gamma_q3, s.sin_mean, s.rho, lead_.modulus, lead_.gap);
    if (lead_.pair)
      n += std::snprintf(line + n, sizeof line - n, ", rotation %.6f (arg lambda_1 %.6f)", s.rotation, lead_.angle());
    std::snprintf(line + n, sizeof line - n, " [%.1f s]", MPI_Wtime() - start_);
    comm_.print(line);
    return std::isfinite(s.gamma_mean) ? "" : "the alignment gamma is NaN after layer " + std::to_string(t);
  }

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
    h5::write_series_row(file.study_series("power", "plane_first", H5T_IEEE_F64LE, {n, 2}), row, H5T_NATIVE_DOUBLE,
                         a.data(), begin, count);
    h5::write_series_row(file.study_series("power", "plane_last", H5T_IEEE_F64LE, {n, 2}), row, H5T_NATIVE_DOUBLE,
                         b.data(), begin, count);
  }

  void write_final_state(RunFile& file);
  void write_settings(hid_t g) const;
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
  LeadingDirection lead_;
  LayerAlignment last_{};
  std::vector<std::int64_t> index_, pair_;
  std::vector<double> series_[kSeries];
};

// The final state, the series, the error ratio against the closed form |lambda_2| / |lambda_1|
// (|lambda_3| for a pair) of the last layer, and the summary line.
void PowerRun::write_final_state(RunFile& file) {
  const hid_t g = file.study_group("power");
  const std::string final_state = detector_.classify(x_.data());
  const double error_ratio = fitted_error_ratio(series_[kSinMean]);
  const double closed_ratio = lead_last_.modulus > 0 ? lead_last_.next_modulus / lead_last_.modulus : NAN;
  write_ints(g, "layer", index_, comm_);
  write_ints(g, "pair", pair_, comm_);
  for (int k = 0; k < kSeries; ++k) h5::write_vector(g, kNames[k], series_[k], comm_.get());
  h5::write_vector(g, "basis_first", lead_first_.plane, comm_.get(), {2, hsize_t(d_)});
  h5::write_vector(g, "basis_last", lead_last_.plane, comm_.get(), {2, hsize_t(d_)});
  h5::write_attribute(g, "state", final_state);
  write_settings(g);
  h5::write_attribute(g, "circulating_layers", detector_.circulating_layers());
  h5::write_attribute(g, "baseline", random_alignment_baseline(d_, false));
  h5::write_attribute(g, "baseline_plane", random_alignment_baseline(d_, true));
  h5::write_attribute(g, "error_ratio", error_ratio);
  h5::write_attribute(g, "error_ratio_closed_form", closed_ratio);
  double rho_avg = 0;
  for (double r : series_[kRho]) rho_avg += r / layers_;
  h5::write_attribute(g, "rho_mean", rho_avg);
  char line[400];
  std::snprintf(line, sizeof line,
                "final state: %s; gamma %.6f (baseline %.4f); mean rho %.4f; error ratio per layer %.6f "
                "(|lambda_2|/|lambda_1| of the last layer %.6f); %.2f s",
                final_state.c_str(), series_[kGammaMean].back(), random_alignment_baseline(d_, lead_last_.pair),
                rho_avg, error_ratio, closed_ratio, MPI_Wtime() - start_);
  comm_.print(line);
}

// What the run was: the layer, the source, the tokens, the detector's settings.
void PowerRun::write_settings(hid_t g) const {
  h5::write_attribute(g, "attention", p_.layer.attention);
  h5::write_attribute(g, "causal", std::int64_t(p_.layer.causal));
  h5::write_attribute(g, "residual", std::int64_t(p_.layer.residual));
  h5::write_attribute(g, "shared", std::int64_t(shared_));
  h5::write_attribute(g, "weights", source_.describe());
  h5::write_attribute(g, "N", partition_.n_global);
  h5::write_attribute(g, "d", std::int64_t(d_));
  h5::write_attribute(g, "tol", p_.tol);
  h5::write_attribute(g, "window", p_.window);
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
  const hid_t sg = file.study_group("steer");
  std::vector<double> c, alpha, mean, least, re, im, sgap, eig;
  for (const SteeringPoint& p : points) {
    c.push_back(p.strength), alpha.push_back(p.alpha), mean.push_back(p.alignment.mean);
    least.push_back(p.alignment.min), re.push_back(p.lambda1_re), im.push_back(p.lambda1_im), sgap.push_back(p.gap);
    eig.push_back(p.eigvec_alignment);
  }
  const std::pair<const char*, const std::vector<double>*> steer_series[] = {
      {"strength", &c},     {"alpha", &alpha},     {"alignment_mean", &mean}, {"alignment_min", &least},
      {"lambda1_re", &re}, {"lambda1_im", &im},   {"gap", &sgap},            {"eigvec_alignment", &eig}};
  for (const auto& [name, values] : steer_series) h5::write_vector(sg, name, *values, comm_.get());
  h5::write_vector(sg, "target", u_, comm_.get());
  h5::write_attribute(sg, "target_spec", p_.target);
  h5::write_attribute(sg, "lambda1_abs", steer.lambda1_modulus.back());
  h5::write_attribute(sg, "layers", p_.steer_layers);
  h5::write_attribute(sg, "value_rank", std::int64_t(points.empty() ? 0 : points[0].value_rank));
  const TargetAlignment unsteered = target_alignment(comm_.get(), partition_, x_.data(), u_);
  h5::write_attribute(sg, "unsteered_alignment_mean", unsteered.mean);
  h5::write_attribute(sg, "target_v1_alignment", alignment(model_.lead(layers_ - 1, nullptr, false), u_.data()));
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
