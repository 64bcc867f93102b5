// tokdyn train as a run state: step k of the run is a record, eval_every optimizer steps. Each step takes
// batch sequences at offsets from (seed, step), biases from (seed, step), one all-reduce of the loss and
// gradient, and the optimizer's update on every rank alike. A record adds the validation loss (the same
// sequences each time, with the biases' means or the last draw), the EMAs, the gradient norm, the
// optimizer's momentum and energy, and the charges of every head. The checkpoint holds the parameters,
// the optimizer's state and the running summaries: a restart continues bit for bit.
#include "train_run.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/phases.hpp"
#include "tokdyn/core/console/signals.hpp"
#include "tokdyn/core/numerics/dot.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/io/matrix_file.hpp"
#include "tokdyn/io/safetensors.hpp"
#include "tokdyn/train/charges.hpp"
#include "tokdyn/train/gpt2_tensors.hpp"
#include "tokdyn/train/key_alignment.hpp"

namespace tokdyn {

namespace {

// What /train holds (io/outputs.hpp): declared here, beside the code that writes it.
constexpr OutputDecl kTrainOutputs[] = {
    {"train/final_parameters", OutputType::real, "1", "parameter",
     "The trained parameters at the end, flat in the order of train/gpt.hpp's GptLayout (wte, wpe, per layer ln_1, "
     "c_attn weight [3C, C] and bias, c_proj, ln_2, c_fc, PReLU slopes, mlp c_proj; ln_f); train.export writes "
     "them as GPT-2's named tensors, model.init_file reads them back."},
    {"train/parameters", OutputType::real, "1", "parameters_record, parameter",
     "All parameters (as train/final_parameters) at every train.parameters_every-th record, the first and the last "
     "included; the records' steps are train/parameters_step. weights.format = train reads any row."},
    {"train/parameters_step", OutputType::integer, "step", "parameters_record",
     "The optimizer step of each row of train/parameters."},
    {"train/alignment", OutputType::real, "1", "head, statistic",
     "Per head (index layer x heads + head): the mean over the vocabulary of alignment_cos (its finite entries), the mean and standard deviation of the same statistic for train.alignment_null random directions, and the p-value (1 + #{|m_r| >= |m|}) / (R + 1); written when bias.query_mu is nonzero."},
    {"train/alignment_cos", OutputType::real, "1", "head, token",
     "Key-bias alignment at the end: cos(W_K e_t, mean b_Q) of each head's key of each vocabulary token t, e_t what the head's layer reads for t (LN_1 of its input averaged over t's places in the validation sequences; NaN for a token absent there) or, with train.alignment_inputs = embedding, t's raw embedding; written when bias.query_mu is nonzero."},
    {"train/charges_qk", OutputType::real, "1", "record, head, head_row, head_column",
     "Charge matrix L_QK [d_h, d_h] (antisymmetric; entry (p, q) is minus the charge of the rotation generator e_p e_q^T - e_q e_p^T, from W_Q, W_K and the biases c_q, c_k with their momenta) of every head, index layer x heads + head, at records 0..R."},
    {"train/charges_vo", OutputType::real, "1", "record, head, head_row, head_column",
     "Charge matrix L_VO [d_h, d_h] (antisymmetric, from W_V, c_v and W_O with their momenta) of every head, index layer x heads + head, at records 0..R."},
    {"train/step_grad_norm", OutputType::real, "nats", "record, step",
     "Euclidean norm of the minibatch gradient over all parameters at every optimizer step; row k-1 holds the train.eval_every steps that end at record k."},
    {"train/step_loss", OutputType::real, "nats", "record, step",
     "Minibatch loss (mean next-token cross-entropy per predicted token) of every optimizer step; row k-1 holds the train.eval_every steps that end at record k."},
    {"train@alignment_columns", OutputType::text, "", "",
     "The columns of train/alignment: \"mean cos, null mean, null std, p-value\"; written when bias.query_mu is nonzero."},
    {"train@alignment_inputs", OutputType::text, "", "",
     "e_t of train/alignment_cos: \"layer\" (what the layer reads for token t) or \"embedding\" (the raw token embedding); written when bias.query_mu is nonzero."},
    {"train@charge_drift_max", OutputType::real, "1", "",
     "Largest charge_drift over the records: sin of the angle between the charges (L_QK, L_VO of every head) and their first value above round-off (|L| / (|P| |theta|) above 1e3 epsilons of train.precision); 0 when they never rose above it."},
    {"train@charge_relative_max", OutputType::real, "1", "",
     "Largest charge_relative |L| / (|P| |theta|) over the records: the charges of every head (L_QK, L_VO) against the momentum P and the parameters theta."},
    {"train@max_energy", OutputType::real, "1", "",
     "The largest energy of the optimizer after a step over the whole run, the quantity diagnostics/energy "
     "records at each record (ECD: |u|^2 after the kick, 1 for a kick that keeps unit speed, large when F - F0 was "
     "small; ECDSep: its H); NaN for optimizers without one (SGDM, AdamW)."},
    {"train@max_energy_step", OutputType::real, "steps", "",
     "The optimizer step after which train@max_energy was reached (NaN with it)."},
    {"train@final_train_loss_ema", OutputType::real, "nats", "",
     "Training-loss EMA at the end (the last diagnostics/train_loss_ema)."},
    {"train@final_val_loss", OutputType::real, "nats", "",
     "Validation loss at the last record (the last diagnostics/val_loss)."},
    {"train@final_val_loss_ema", OutputType::real, "nats", "",
     "Validation-loss EMA at the end (the last diagnostics/val_loss_ema)."},
    {"train@min_val_loss", OutputType::real, "nats", "",
     "Lowest validation loss over the records, record 0 (before training) included."},
    {"train@min_val_step", OutputType::real, "steps", "",
     "Optimizer step of the first record with the lowest validation loss (min_val_loss), k train.eval_every."},
    {"train@optimizer", OutputType::text, "", "",
     "The optimizer, train.optimizer (ecd, ecdsep, sgdm or adamw)."},
    {"train@parameters", OutputType::integer, "count", "",
     "Trained parameters: the length of the flat parameter vector theta."},
    {"train@tokens_per_second", OutputType::real, "tokens/s", "",
     "Training throughput: tokens of the optimizer steps taken (steps x train.batch x train.context) per second of their wall time (forward, backward, all-reduce and step), over this process only (a resumed run: since the resume); NaN when it took none."},
    {"train@train_tokens", OutputType::integer, "tokens", "",
     "Tokens of the training part: the text (or the chain's sample path) less its last train.validation fraction."},
    {"train@validation_tokens", OutputType::integer, "tokens", "",
     "Tokens of the validation part: the last train.validation fraction of the text (or the chain's sample path)."},
    {"train@vocabulary", OutputType::text, "", "",
     "The vocabulary, each token followed by a newline, in token order: the characters (or bytes, train.tokenizer = bytes) of the text in byte order, or the chain's states 0 .. d-1 (train.data = markov)."},
};
const DeclaredOutputs kTrainDeclared("train", kTrainOutputs);

// Charges below this many epsilons of |P| |theta| are round-off (a float run's conserved charges reach
// ~1e2 epsilon after 1e3 steps).
constexpr double kRoundoffCharges = 1e3;

// A token as it prints: a blank quoted, newline and tab by name, every other control character as \xNN (a raw
// one would move the cursor or ring the terminal); other bytes, UTF-8 included, as they are.
std::string token_text(const std::string& token) {
  if (token == " ") return "' '";
  std::string out;
  for (unsigned char c : token) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// The initial parameters: GPT-2's random start from the seed, or model.init_file's: a train run file's
// train/final_parameters, or the tensors of a GPT-2 safetensors file (gpt2_tensors.hpp), of this deck's
// shape and finite (else InputError naming the file). Collective (every rank reads the same file).
template <class T>
std::vector<T> initial_parameters(const Comm& comm, const TrainParams& p) {
  if (p.init_file.empty()) return initial_gpt<T>(p.model, p.init, p.seed);
  const std::string what = "model.init_file '" + p.init_file + "'";
  const std::size_t size = GptLayout(p.model).size;
  std::vector<T> theta(size);
  if (is_hdf5(p.init_file)) {
    const std::vector<double> v =
        read_matrix_file(p.init_file, "train/final_parameters", {std::int64_t(size)}, kWholeDataset, what, comm.get());
    for (std::size_t i = 0; i < size; ++i) {
      if (!std::isfinite(v[i])) throw InputError(what + ": train/final_parameters holds NaN or Inf (entry " +
                                                 std::to_string(i) + ")");
      theta[i] = static_cast<T>(v[i]);
    }
    return theta;
  }
  const SafetensorsFile file = SafetensorsFile::open(p.init_file);
  try {
    gpt_from_gpt2_tensors<T>(
        p.model,
        [&](const std::string& name, const std::vector<std::int64_t>& shape) {
          const std::vector<std::int64_t>& has = file.info(name).shape;
          if (has != shape)
            throw InputError("tensor '" + name + "' has shape " + shape_text(has) + ", this deck's model needs " +
                             shape_text(shape));
          return file.read(name);
        },
        theta.data());
  } catch (const InputError& e) {
    throw InputError(what + ": " + e.what());
  }
  return theta;
}

// An exponential moving average with Adam's bias correction: after x_1..x_n (weight a for the newest),
// sum_j a (1 - a)^(n - j) x_j / (1 - (1 - a)^n). Without the division, an average started at x_1 keeps
// (1 - a)^(n - 1) of its weight on x_1 (13.5 % after 20 records at a = 0.1).
struct Ema {
  double a = 0.1, sum = 0, weight = 0;  // weight = 1 - (1 - a)^n
  void add(double x) {
    sum = a * x + (1 - a) * sum;
    weight = a + (1 - a) * weight;
  }
  double value() const { return weight > 0 ? sum / weight : NAN; }
};

template <class T>
class TrainRun : public RunState {
 public:
  TrainRun(const Comm& comm, const TrainParams& p, const TextSplit& split, const std::vector<std::string>& vocabulary)
      : comm_(comm),
        p_(p),
        split_(split),
        vocabulary_(vocabulary),
        model_(p.model),
        theta_(initial_parameters<T>(comm, p)),
        grad_(theta_.size()),
        optimizer_(p.optimizer->make<T>(p.optimizer_context, theta_.size())),
        step_loss_(p.eval_every),
        step_grad_(p.eval_every),
        validation_(validation_offsets(p.eval_sequences, static_cast<std::int64_t>(split.validation.size()),
                                       p.model.context)) {
    train_ema_.a = val_ema_.a = p.ema;
  }

  std::int64_t steps() const override { return p_.records(); }
  std::string unit() const override { return "record"; }
  double work_per_step() const override {
    return static_cast<double>(p_.eval_every * p_.batch) * p_.model.context;
  }
  std::string work_unit() const override { return "tokens"; }

  void begin(RunFile& file) override {
    RunGroup g = file.group("train");
    std::string vocab;
    for (const std::string& v : vocabulary_) vocab += v + "\n";
    g.attribute("vocabulary", vocab);
    g.attribute("parameters", static_cast<std::int64_t>(theta_.size()));
    g.attribute("optimizer", p_.optimizer->name);
    g.attribute("train_tokens", static_cast<std::int64_t>(split_.train.size()));
    g.attribute("validation_tokens", static_cast<std::int64_t>(split_.validation.size()));
    const std::size_t vectors = optimizer_->state_per_parameter();
    char line[256];
    std::snprintf(line, sizeof line,
                  "%zu parameters; %s keeps %zu vector%s per parameter: %zu bytes per parameter with theta (%s)",
                  theta_.size(), p_.optimizer->name.c_str(), vectors, vectors == 1 ? "" : "s", (1 + vectors) * sizeof(T),
                  sizeof(T) == 4 ? "float" : "double");
    comm_.print(line);
    observe(0, file);
    comm_.print(record_line_);
  }

  // A signal during a record (polled before every optimizer step but the first) puts the parameters and
  // the optimizer back at the record's start: the run checkpoints record k at once instead of after up to
  // eval_every more steps, and the resumed run takes the whole record again, as the uninterrupted one did.
  std::int64_t advance(std::int64_t k) override {
    const double start = MPI_Wtime();
    keep_record_start();
    for (std::int64_t i = 0; i < p_.eval_every; ++i) {
      if (i > 0 && stop_requested(comm_.get())) {
        back_to_record_start();
        return k;
      }
      const std::int64_t s = k * p_.eval_every + i;
      double loss = 0;
      {
        PhaseScope timed(Phase::gradient);
        loss = batch_loss(model_, theta_.data(), split_.train, train_offsets(s), p_.model.context, training_biases(s),
                          grad_.data(), comm_.get());
      }
      const double g2 = dot(grad_.data(), grad_.data(), 0, grad_.size());
      {
        PhaseScope timed(Phase::optimizer);
        optimizer_->step(loss, grad_.data(), theta_.data());
      }
      step_loss_[i] = loss;
      step_grad_[i] = std::sqrt(g2);
      const double energy = optimizer_->energy();
      if (energy > max_energy_ || (std::isnan(max_energy_) && std::isfinite(energy)))
        max_energy_ = energy, max_energy_step_ = static_cast<double>(s + 1);
      train_ema_.add(loss);
    }
    train_seconds_ += MPI_Wtime() - start;
    trained_steps_ += p_.eval_every;
    return k + 1;
  }

  std::string observe(std::int64_t k, RunFile& file) override {
    RunGroup g = file.group("train");
    double train = 0, grad_norm = NAN;
    if (k == 0) {
      // Before training: the loss and gradient of step 0's batch.
      train = batch_loss(model_, theta_.data(), split_.train, train_offsets(0), p_.model.context, training_biases(0),
                         grad_.data(), comm_.get());
      const double g2 = dot(grad_.data(), grad_.data(), 0, grad_.size());
      grad_norm = std::sqrt(g2);
    } else {
      for (double v : step_loss_) train += v / static_cast<double>(step_loss_.size());
      grad_norm = step_grad_.back();
      const hsize_t mine = comm_.root() ? 1 : 0, E = static_cast<hsize_t>(p_.eval_every);
      g.write_row("step_loss", {E}, hsize_t(k - 1), step_loss_.data(), 0, mine * E);
      g.write_row("step_grad_norm", {E}, hsize_t(k - 1), step_grad_.data(), 0, mine * E);
    }
    // Validation: the same sequences at every record and for every seed (evenly spaced over the part).
    const SymmetryBiases eval = validation_biases(k * p_.eval_every - 1);
    const double val = batch_loss(model_, theta_.data(), split_.validation, validation_, p_.model.context, eval,
                                  static_cast<T*>(nullptr), comm_.get());
    // The EMAs hold the trained steps and records only; record 0 shows the raw values.
    if (k > 0) val_ema_.add(val);
    const double train_ema = k > 0 ? train_ema_.value() : train, val_ema = k > 0 ? val_ema_.value() : val;
    if (!(val >= best_val_)) best_val_ = val, best_step_ = k * p_.eval_every;
    last_val_ = val;
    // The charges of every head, their size against |P| |theta| and the drift of their direction.
    const std::vector<T>& P = optimizer_->momentum();
    const std::vector<HeadCharges> q = head_charges(p_.model, model_.layout(), theta_.data(), P.data());
    const std::size_t heads = q.size(), D = static_cast<std::size_t>(p_.model.head_dim());
    std::vector<double> qk(heads * D * D), vo(heads * D * D), l;
    for (std::size_t h = 0; h < heads; ++h) {
      std::copy(q[h].qk.begin(), q[h].qk.end(), qk.begin() + h * D * D);
      std::copy(q[h].vo.begin(), q[h].vo.end(), vo.begin() + h * D * D);
    }
    l = qk;
    l.insert(l.end(), vo.begin(), vo.end());
    double l2 = 0;
    for (double v : l) l2 += v * v;
    const double p2 = dot(P.data(), P.data(), 0, P.size()), t2 = dot(theta_.data(), theta_.data(), 0, theta_.size());
    const double relative = p2 > 0 ? std::sqrt(l2 / (2 * p2 * t2)) : 0.0;  // each charge appears twice in l
    // The direction of charges at round-off is noise: the drift is measured only above it.
    const bool above = relative > kRoundoffCharges * std::numeric_limits<T>::epsilon();
    if (reference_.empty() && above) reference_ = l;
    double drift = NAN;  // sin of the angle between l and its first value above round-off
    if (!reference_.empty() && above) {
      // |l - (l.r / r.r) r| / |l|: the part of l across r, accurate to round-off (sqrt(1 - cos^2) stops at 1e-8).
      double r2 = 0, lr = 0, across = 0;
      for (std::size_t i = 0; i < l.size(); ++i) r2 += reference_[i] * reference_[i], lr += l[i] * reference_[i];
      for (std::size_t i = 0; i < l.size(); ++i) {
        const double o = l[i] - lr / r2 * reference_[i];
        across += o * o;
      }
      drift = std::min(1.0, std::sqrt(across / l2));
      max_drift_ = std::max(max_drift_, drift);
    }
    max_relative_ = std::max(max_relative_, relative);
    DiagnosticsRow row;
    row.layer = k;
    row.time = static_cast<double>(k * p_.eval_every);
    row.scalars = {{"step", static_cast<double>(k * p_.eval_every)},
                   {"tokens", static_cast<double>(k * p_.eval_every * p_.batch * p_.model.context)},
                   {"train_loss", train},
                   {"train_loss_ema", train_ema},
                   {"val_loss", val},
                   {"val_loss_ema", val_ema},
                   {"grad_norm", grad_norm},
                   {"momentum_norm2", p2},
                   {"energy", optimizer_->energy()},
                   {"charge_norm", std::sqrt(l2 / 2)},
                   {"charge_relative", relative},
                   {"charge_drift", drift}};
    file.write_diagnostics(row);
    const hsize_t mine = comm_.root() ? 1 : 0, H = heads;
    g.write_row("charges_qk", {H, D, D}, hsize_t(k), qk.data(), 0, mine * H);
    g.write_row("charges_vo", {H, D, D}, hsize_t(k), vo.data(), 0, mine * H);
    if (p_.parameters_every > 0) {
      const std::int64_t stored = stored_record_row(k, p_.parameters_every, p_.records());
      if (stored >= 0) {
        const std::vector<double> all(theta_.begin(), theta_.end());
        const hsize_t P = all.size();
        g.write_row("parameters", {P}, hsize_t(stored), all.data(), 0, mine * P);
        const std::int64_t step = k * p_.eval_every;
        g.write_row("parameters_step", {}, hsize_t(stored), &step, 0, mine);
      }
    }
    char line[320];
    std::snprintf(line, sizeof line,
                  "step %lld/%lld: train %.4f (EMA %.4f), validation %.4f (EMA %.4f), |g| %.3g, charges %.2e of "
                  "|P||theta|",
                  static_cast<long long>(k * p_.eval_every), static_cast<long long>(p_.steps), train, train_ema, val,
                  val_ema, grad_norm, relative);
    record_line_ = line;
    return std::isfinite(val) && std::isfinite(train) ? ""
                                                       : "the loss is NaN or Inf at step " + std::to_string(k * p_.eval_every);
  }

  std::string record_line() const override { return record_line_; }

  bool finite() const override {
    for (T v : theta_)
      if (!std::isfinite(v)) return false;
    return true;
  }
  std::string nonfinite_message(std::int64_t k) const override {
    return "NaN or Inf in the parameters after step " + std::to_string(k * p_.eval_every) + " (lower the learning rate)";
  }

  void save(CheckpointWriter& out) const override {
    out.values("theta", std::vector<double>(theta_.begin(), theta_.end()));
    for (const auto& [name, v] : optimizer_->state_vectors())
      out.values("optimizer_" + name, std::vector<double>(v->begin(), v->end()));
    for (const auto& [name, v] : optimizer_->state_scalars()) out.attribute("optimizer_" + name, *v);
    const std::pair<const char*, double> scalars[] = {
        {"train_ema_sum", train_ema_.sum}, {"train_ema_weight", train_ema_.weight},
        {"val_ema_sum", val_ema_.sum},     {"val_ema_weight", val_ema_.weight},     {"best_val", best_val_},
        {"last_val", last_val_},     {"max_drift", max_drift_},     {"max_relative", max_relative_},
        {"best_step", static_cast<double>(best_step_)}, {"max_energy", max_energy_},
        {"max_energy_step", max_energy_step_}};
    for (const auto& [name, v] : scalars) out.attribute(name, v);
    out.values("charge_reference", reference_);
  }

  void restore(const CheckpointReader& in, RunFile&) override {
    const std::vector<double> theta = in.values("theta", theta_.size());
    std::copy(theta.begin(), theta.end(), theta_.begin());
    for (const auto& [name, v] : optimizer_->state_vectors()) {
      const std::vector<double> s = in.values("optimizer_" + name, v->size());
      std::copy(s.begin(), s.end(), v->begin());
    }
    for (const auto& [name, v] : optimizer_->state_scalars()) {
      // Checkpoints before 2026-12-06 lack F_min, unused then (F0 was a number): it keeps its NaN.
      if (name == "F_min" && !in.has("optimizer_F_min")) continue;
      *v = in.real_attribute("optimizer_" + name);
    }
    if (in.has("train_ema_weight")) {
      train_ema_.sum = in.real_attribute("train_ema_sum"), train_ema_.weight = in.real_attribute("train_ema_weight");
      val_ema_.sum = in.real_attribute("val_ema_sum"), val_ema_.weight = in.real_attribute("val_ema_weight");
    } else {
      // A checkpoint of tokdyn before 2026-12-06 holds averages started at their first value, without the
      // correction: weight 1 continues them exactly as they were computed.
      train_ema_.sum = in.real_attribute("train_ema"), val_ema_.sum = in.real_attribute("val_ema");
      train_ema_.weight = val_ema_.weight = 1;
    }
    best_val_ = in.real_attribute("best_val"), last_val_ = in.real_attribute("last_val");
    max_drift_ = in.real_attribute("max_drift"), max_relative_ = in.real_attribute("max_relative");
    best_step_ = static_cast<std::int64_t>(in.real_attribute("best_step"));
    if (in.has("max_energy"))  // checkpoints of tokdyn before 2026-12-06 lack it: measured from here on
      max_energy_ = in.real_attribute("max_energy"), max_energy_step_ = in.real_attribute("max_energy_step");
    reference_ = in.values("charge_reference");
    // Empty until the charges first rise above round-off; then qk and vo of every head.
    const std::size_t D = static_cast<std::size_t>(p_.model.head_dim()), charges = 2 * static_cast<std::size_t>(p_.model.layers * p_.model.heads) * D * D;
    if (!reference_.empty() && reference_.size() != charges)
      throw InputError("checkpoint '" + in.path() + "' is damaged: state 'charge_reference' has " +
                       std::to_string(reference_.size()) + " values, this run needs 0 or " + std::to_string(charges));
  }

  void finish(RunFile& file) override {
    RunGroup g = file.group("train");
    g.write("final_parameters", std::vector<double>(theta_.begin(), theta_.end()));
    if (!p_.export_file.empty()) {
      // Rank 0 writes OUTPUT.safetensors.part and renames it: a file that exists is whole.
      if (comm_.root())
        write_safetensors(p_.export_file, gpt2_tensors<T>(p_.model, theta_.data()),
                          {{"format", "pt"}, {"tokdyn", "train"}, {"n_layer", std::to_string(p_.model.layers)},
                           {"n_head", std::to_string(p_.model.heads)}, {"n_embd", std::to_string(p_.model.channels)},
                           {"n_ctx", std::to_string(p_.model.context)}, {"vocab_size", std::to_string(p_.model.vocab)},
                           {"activation", p_.model.prelu ? "prelu" : "gelu"}});
      comm_.barrier();
      comm_.print("exported the trained parameters to '" + p_.export_file + "' (GPT-2 tensors, " +
                  (sizeof(T) == 4 ? "F32" : "F64") + "; read with weights.format = gpt2, weights.heads = " +
                  std::to_string(p_.model.heads) + ")");
    }
    const double tokens = static_cast<double>(trained_steps_ * p_.batch * p_.model.context);
    const double rate = train_seconds_ > 0 ? tokens / train_seconds_ : NAN;
    const std::pair<const char*, double> results[] = {
        {"final_val_loss", last_val_},     {"final_val_loss_ema", val_ema_.value()}, {"min_val_loss", best_val_},
        {"min_val_step", static_cast<double>(best_step_)},  {"final_train_loss_ema", train_ema_.value()},
        {"tokens_per_second", rate},        {"charge_relative_max", max_relative_}, {"charge_drift_max", max_drift_},
        {"max_energy", max_energy_}, {"max_energy_step", max_energy_step_}};
    for (const auto& [name, v] : results) g.attribute(name, v);
    char line[400];
    std::snprintf(line, sizeof line,
                  "validation loss: end %.4f raw, %.4f EMA (weight %g, bias-corrected); lowest raw %.4f at step %lld; "
                  "training loss EMA %.4f",
                  last_val_, val_ema_.value(), p_.ema, best_val_, static_cast<long long>(best_step_), train_ema_.value());
    comm_.print(line);
    char drift[160] = "direction not measured (at round-off throughout)";
    if (!reference_.empty())
      std::snprintf(drift, sizeof drift, "direction drift at most %.3e (sin of the angle to the first charges above "
                    "round-off)", max_drift_);
    std::snprintf(line, sizeof line, "charges: largest %.3e of |P||theta|, %s; training %.4g tokens/s on %d rank%s "
                  "(forward + backward + step)",
                  max_relative_, drift, rate, comm_.size(), comm_.size() == 1 ? "" : "s");
    comm_.print(line);
    if (std::isfinite(max_energy_)) {
      std::snprintf(line, sizeof line,
                    "%s: energy after a step at most %.4g (after step %.0f; ECD's is |u|^2 = 1 + (c dt |g across u| / "
                    "(F - F0))^2: large for a steep gradient or a small F - F0)",
                    p_.optimizer->name.c_str(), max_energy_, max_energy_step_);
      comm_.print(line);
    }
    if (const std::string offset = optimizer_->report(); !offset.empty()) comm_.print(offset);
    alignment(g);
  }

  double state_bytes() const override {
    return 8.0 * static_cast<double>(theta_.size()) * static_cast<double>(1 + optimizer_->state_per_parameter());
  }

 private:
  // The state a record starts from: parameters, the optimizer's vectors and scalars, the training EMA.
  void keep_record_start() {
    start_theta_ = theta_;
    start_vectors_.clear();
    for (const auto& [name, v] : optimizer_->state_vectors()) start_vectors_.push_back(*v);
    start_scalars_.clear();
    for (const auto& [name, v] : optimizer_->state_scalars()) start_scalars_.push_back(*v);
    start_ema_ = train_ema_;
  }
  void back_to_record_start() {
    theta_ = start_theta_;
    std::size_t i = 0;
    for (const auto& [name, v] : optimizer_->state_vectors()) *v = start_vectors_[i++];
    i = 0;
    for (const auto& [name, v] : optimizer_->state_scalars()) *v = start_scalars_[i++];
    train_ema_ = start_ema_;
  }

  std::vector<std::int64_t> train_offsets(std::int64_t step) const {
    return batch_offsets(p_.seed, step, p_.batch, static_cast<std::int64_t>(split_.train.size()), p_.model.context);
  }
  // The biases of a validation after `last` steps: their means, or the last step's draw (train.eval_biases).
  SymmetryBiases validation_biases(std::int64_t last) const {
    return p_.eval_last && last >= 0 ? training_biases(last) : mean_biases(p_.biases, p_.model.layers);
  }
  SymmetryBiases training_biases(std::int64_t step) const {
    return p_.fixed_biases ? mean_biases(p_.biases, p_.model.layers)
                           : sample_biases(p_.biases, p_.model.layers, p_.seed, step);
  }

  // cos(W_K e_t, mean b_Q) per head against its random-direction null.
  void alignment(RunGroup& g) {
    if (p_.alignment_direction.empty()) {
      comm_.print("key-bias alignment: not measured (bias.query_mu is zero)");
      return;
    }
    // e_t as each layer's attention reads it on the validation sequences (with the validation's biases), or
    // the raw embeddings.
    std::vector<double> inputs;
    if (p_.alignment_layer_inputs)
      inputs = mean_attention_inputs(model_, theta_.data(), split_.validation, validation_, p_.model.context,
                                     validation_biases(p_.steps - 1), comm_.get());
    const std::vector<HeadAlignment> a = key_bias_alignment(p_.model, theta_.data(), inputs, p_.alignment_direction,
                                                            p_.alignment_null, p_.seed, p_.alignment_top);
    const std::size_t V = vocabulary_.size();
    std::vector<double> cos, table;
    for (const HeadAlignment& h : a) {
      cos.insert(cos.end(), h.cos.begin(), h.cos.end());
      table.insert(table.end(), {h.mean_cos, h.null_mean, h.null_std, h.p_value});
    }
    g.write("alignment_cos", cos, {a.size(), V});
    g.write("alignment", table, {a.size(), 4});
    g.attribute("alignment_columns", std::string("mean cos, null mean, null std, p-value"));
    g.attribute("alignment_inputs", std::string(p_.alignment_layer_inputs ? "layer" : "embedding"));
    comm_.print(std::string("key-bias alignment cos(W_K e_t, mean b_Q) over the vocabulary (e_t: ") +
                (p_.alignment_layer_inputs ? "what the layer reads for token t on the validation sequences"
                                           : "the raw token embedding") +
                "), against " + std::to_string(p_.alignment_null) + " random directions:");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const HeadAlignment& h = a[i];
      std::string top;
      for (int t : h.top) {
        char item[64];
        std::snprintf(item, sizeof item, " %s %+.2f", token_text(vocabulary_[t]).c_str(), h.cos[t]);
        top += item;
      }
      char line[512];
      std::snprintf(line, sizeof line, "  layer %zu head %zu: mean cos %+.3f, null %+.3f +- %.3f, p = %.3g%s; largest:%s",
                    i / p_.model.heads, i % p_.model.heads, h.mean_cos, h.null_mean, h.null_std, h.p_value,
                    h.p_value < 0.01 ? " (far from the null)" : "", top.c_str());
      comm_.print(line);
    }
  }

  const Comm& comm_;
  const TrainParams& p_;
  const TextSplit& split_;
  const std::vector<std::string>& vocabulary_;
  Gpt<T> model_;
  std::vector<T> theta_, grad_;
  std::unique_ptr<Optimizer<T>> optimizer_;
  std::vector<double> step_loss_, step_grad_;  // of the steps since the last record
  std::vector<std::int64_t> validation_;       // offsets of the validation sequences
  std::vector<double> reference_;              // the first nonzero charges (qk then vo of every head)
  std::vector<T> start_theta_;                 // keep_record_start()
  std::vector<std::vector<T>> start_vectors_;
  std::vector<double> start_scalars_;
  Ema start_ema_;
  double max_energy_ = NAN, max_energy_step_ = NAN;  // the largest optimizer energy after a step, and when
  Ema train_ema_, val_ema_;  // the training loss per step and the validation loss per record
  double best_val_ = INFINITY, last_val_ = NAN, max_drift_ = 0, max_relative_ = 0;
  std::int64_t best_step_ = 0, trained_steps_ = 0;
  double train_seconds_ = 0;
  std::string record_line_;  // of the last observe()
};

}  // namespace

std::unique_ptr<RunState> make_train_run(const Comm& comm, const TrainParams& p, const TextSplit& split,
                                         const std::vector<std::string>& vocabulary) {
  if (p.single) return std::make_unique<TrainRun<float>>(comm, p, split, vocabulary);
  return std::make_unique<TrainRun<double>>(comm, p, split, vocabulary);
}

}  // namespace tokdyn
