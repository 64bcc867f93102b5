#include "tokdyn/studies/markov_study.hpp"

#include <cmath>
#include <cstdio>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/core/console/signals.hpp"
#include "tokdyn/io/matrix_file.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/markov/stages.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/spectral/top_singular.hpp"

namespace tokdyn {

namespace {

// What /markov holds (io/outputs.hpp): declared here, beside the code that writes it.
constexpr OutputDecl kMarkovOutputs[] = {
    {"markov/embedding", OutputType::real, "1", "record, token, embedding_coordinate",
     "W0 itself at each record: row i is the m-dimensional embedding of vocabulary token i (for the PCA of the embeddings)."},
    {"markov/W1", OutputType::real, "1", "weights_record, embedding_coordinate, token",
     "W1 [m, d], the output map, at the records of markov/weights_record (W0 is markov/embedding at every record)."},
    {"markov/WK", OutputType::real, "1", "weights_record, embedding_coordinate, key_coordinate",
     "WK [m, m_k], the key map, at the records of markov/weights_record."},
    {"markov/WQ", OutputType::real, "1", "weights_record, embedding_coordinate, key_coordinate",
     "WQ [m, m_k], the query map, at the records of markov/weights_record."},
    {"markov/weights_record", OutputType::integer, "record", "weights_record",
     "The records whose WQ, WK and W1 are stored: every flow.weights_every-th and the last (0: the first and the last). "
     "With markov/embedding at the same record they are the whole model there (model.init_file reads the last)."},
    {"markov/focus_growth", OutputType::real, "1/flow time", "estimate",
     "Measured growth rate of the attention maps before focus, the least-squares slope of ln |WQ|_F against flow time over the second half of [t_I, t_II]: value, low, high (+-1.96 standard errors); NaN when t_II is not reached or fewer than 3 records lie there. Next to markov@focus_rate."},
    {"markov/g_direction", OutputType::real, "1", "token",
     "u_1(G), the unit top left singular vector of the stage-I matrix G = E[c (e_y - 1/d)^T] [d, d] (c the context's token frequencies, plus e_{x_s} with the residual); sign arbitrary."},
    {"markov/mass", OutputType::real, "1", "record, token",
     "Attention mass on each vocabulary token at each record, sum over the positions holding the token of the attention weight, averaged over the items."},
    {"markov/pi", OutputType::real, "1", "token",
     "Reference law pi over the vocabulary: the chain's stationary law (markov.pi or the stage-IV family) or, for a text, its token frequencies."},
    {"markov/onset_sensitivity", OutputType::real, "flow time", "threshold, factor, onset",
     "The onsets t_I .. t_IV (last axis) with one stage threshold (first axis: stages.loss_drop, mass_rise, mass_fall, rank_ratio) multiplied by 1/2 or 2 (middle axis), the others kept; NaN where not reached."},
    {"markov/stage_I_rate", OutputType::real, "1/flow time", "estimate",
     "Measured stage-I growth rate, the least-squares slope of ln |u_1(G)^T W0| against flow time over [t_I/4, 3 t_I/4]: value, low, high (+-1.96 standard errors); NaN when t_I is not reached or fewer than 3 records lie in the window."},
    {"markov/sv_w0", OutputType::real, "1", "record, singular_value",
     "Singular values of W0 [d, m] at each record, largest first."},
    {"markov/sv_w1", OutputType::real, "1", "record, singular_value",
     "Singular values of W1 [m, d] at each record, largest first."},
    {"markov/sv_wk", OutputType::real, "1", "record, singular_value",
     "Singular values of WK [m, m_k] at each record, largest first."},
    {"markov/sv_wq", OutputType::real, "1", "record, singular_value",
     "Singular values of WQ [m, m_k] at each record, largest first."},
    {"markov/w0_row_norms", OutputType::real, "1", "record, token",
     "Euclidean norm of each row of W0 (the embedding of each vocabulary token) at each record."},
    {"markov@evaluations", OutputType::integer, "count", "",
     "Gradient evaluations of the loss over the whole flow, t = 0 to flow.time (the last record's diagnostics/evaluations)."},
    {"markov@final_loss", OutputType::real, "nats", "",
     "Loss at the last record, t = flow.time (the last diagnostics/loss)."},
    {"markov@focus_rate", OutputType::real, "1/flow time", "",
     "The focus rate sigma_max(W0^T H W0) (diagnostics/focus_rate) averaged over the records of markov/focus_growth's window (trapezoids): its prediction; NaN where that is not measured."},
    {"markov@items", OutputType::integer, "count", "",
     "Items the loss averages over, on all ranks: the (last token, counts) states of the exact law (markov.loss = population), the markov.N sampled sequences (sample) or the text's windows of markov.s + 1 tokens every markov.stride (markov.data = text)."},
    {"markov@sigma_1", OutputType::real, "1/flow time", "",
     "sigma_1 = |pi| |pi - 1/d| (Euclidean norms, pi of markov/pi): the limit of sigma* for long sequences."},
    {"markov@sigma_star", OutputType::real, "1/flow time", "",
     "sigma*, the top singular value of the stage-I matrix G = E[c (e_y - 1/d)^T] (see g_direction), by Lanczos: the rate at which W0 and W1 grow while the attention is uniform."},
    {"markov@stage_criteria", OutputType::text, "", "",
     "The criteria that define t_I, t_II, t_III, t_IV and stage_I_rate, in words."},
    {"markov@steps", OutputType::integer, "steps", "",
     "Integrator steps over the whole flow (flow.method = rk: accepted Runge-Kutta steps; gd: gradient-descent steps), the last record's diagnostics/steps."},
    {"markov@t_I", OutputType::real, "flow time", "",
     "Condensation onset t_I: the first flow time the loss is 0.1 below ln d (linear between records); NaN when not reached."},
    {"markov@t_II", OutputType::real, "flow time", "",
     "Focus onset t_II: the time of the first record from t_I on at which the attention mass on the most probable token of pi (markov/mass) exceeds its value at t = 0 by 0.01; NaN when not reached."},
    {"markov@t_III", OutputType::real, "flow time", "",
     "Dilution onset t_III: the time of the running maximum from t_II on of the mass of t_II, taken at the first record where the mass is 0.01 below it while |WQ|_F is above its value there; NaN when not reached."},
    {"markov@t_IV", OutputType::real, "flow time", "",
     "New-direction onset t_IV: the time of the first record from t_I on at which sigma_2(W0) >= 0.1 sigma_1(W0), after a record with sigma_2(W0) below it (W0 of rank one); NaN when not reached."},
    {"markov@t_I_predicted", OutputType::real, "flow time", "",
     "Predicted condensation time ln(1/(eps^2 m)) / (2 sigma*), eps = model.eps, m = model.m."},
    {"markov@vocabulary", OutputType::text, "", "",
     "markov.data = text: the vocabulary, each token (a character, or a byte with markov.tokenizer = bytes) followed by a newline, in token order (the byte order of the symbols)."},
};
const DeclaredOutputs kMarkovDeclared("markov", kMarkovOutputs);

}  // namespace

DeckSchema MarkovStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "markov.h5");
  s.add_choice("markov.data", "chain", {"chain", "text"}, "training data: Markov sequences, or windows of a text file");
  s.add_text("markov.pi", "0.75, 0.19, 0.05, 0.01", "chain: stationary law pi (comma list; d = its length)");
  s.add_real("markov.lambda", 0.5, "chain: probability lam of repeating the last token (P = lam I + (1 - lam) 1 pi^T)",
             0.0, 1.0)
      .max_exclusive = true;  // lambda = 1 repeats the first token for ever: no stationary law
  s.add_choice("markov.start", "pi", {"pi", "uniform"}, "chain: law of x_1");
  s.add_text("markov.family_c", "", "chain, stage IV: c_2..c_d (sum 0); when given, pi = (pi_1, (1 - pi_1)/(d - 1) + c_i delta)");
  s.add_real("markov.family_pi1", 0.75, "chain, stage IV: pi_1", 0.0, 1.0, true);
  s.add_real("markov.delta", 0.0, "chain, stage IV: delta");
  s.add_int("markov.s", 32, "sequence length s (positions attended; the target is x_{s+1})", 2, 1 << 20);
  s.add_choice("markov.loss", "population", {"population", "sample"},
               "population: the exact expectation (a dynamic program over last token and counts); sample: N sequences");
  s.add_int("markov.N", 4096, "sample: sequences", 1, std::int64_t(1) << 40);
  s.add_int("markov.max_states", 2000000, "population: the most (last token, counts) states allowed", 1);
  s.add_file("markov.text_file", "", "text: a UTF-8 file (data = text)");
  s.add_choice("markov.tokenizer", "chars", {"chars", "bytes", "words"},
               "text: tokens are characters, bytes, or words (runs of letters and digits; each punctuation mark a "
               "token; whitespace separates)");
  s.add_int("markov.vocabulary_max", 0,
            "words: the most frequent vocabulary_max - 1 words kept, the rest one token <unk> (0: every word)", 0);
  s.add_int("markov.stride", 1, "text: offset between two windows", 1);
  s.add_int("model.m", 16, "embedding width m (W0 [d, m], W1 [m, d])", 1, 1 << 16);
  s.add_int("model.mk", 16, "query/key width m_k (WQ, WK [m, m_k])", 1, 1 << 16);
  s.add_choice("model.tau", "one", {"one", "sqrt_m"}, "softmax temperature tau: 1 or sqrt(m)");
  s.add_bool("model.residual", false, "add x_s^T W0 W1 to the logits");
  s.add_real("model.eps", 1e-4, "initial scale: every entry N(0, eps^2)", 0.0, 1e6, true);
  s.add_file("model.init_file", "",
             "initial weights instead of N(0, eps^2): an HDF5 file with W0 [d, m], WQ [m, m_k], WK [m, m_k], W1 [m, d] "
             "at its root, or a markov run file (its last stored weights)");
  s.add_choice("flow.method", "rk", {"rk", "gd"},
               "rk: adaptive Runge-Kutta (TSRK 5dp, -ts_* options honoured); gd: gradient descent (forward Euler, step lr)");
  s.add_real("flow.time", 100.0, "flow time T (gd: T / lr steps)", 0.0, 1e300, true);
  s.add_int("flow.records", 200, "records at t = k T / R, k = 0..R (each a step of the run: checkpoints and progress)", 1);
  s.add_int("flow.weights_every", 1,
            "WQ, WK and W1 are stored at every k-th record and the last (0: the first and the last; W0 at every record)",
            0);
  s.add_choice("flow.output", "match", {"match", "dense"},
               "rk: match (the step is shortened to land on each record time) or dense (steps as TSAdapt chooses, "
               "each record interpolated in its step: the trajectory does not depend on flow.records)");
  s.add_real("flow.lr", 0.05, "gd: learning rate (the step of the flow time)", 0.0, 1e6, true);
  s.add_real("flow.rtol", 1e-8, "rk: relative tolerance of TSAdapt", 0.0, 1.0, true);
  s.add_real("flow.atol", 1e-12, "rk: absolute tolerance of TSAdapt", 0.0, 1.0, true);
  s.add_real("flow.first_step", 1e-3, "rk: the first trial step", 0.0, 1e6, true);
  s.add_real("stages.loss_drop", 0.1, "condensation t_I: the first time the loss is this far below ln d", 0.0, 1e6,
             true);
  s.add_real("stages.mass_rise", 0.01,
             "focus t_II: the attention mass on the most frequent token this far above its value at t = 0", 0.0, 1.0,
             true);
  s.add_real("stages.mass_fall", 0.01, "dilution t_III: that mass this far below its maximum (while |WQ| grew)", 0.0,
             1.0, true);
  s.add_real("stages.rank_ratio", 0.1, "new direction t_IV: sigma_2(W0) back above this times sigma_1(W0)", 0.0, 1.0,
             true);
  s.add_real("flow.divergence", 1e3,
             "a record whose loss exceeds this many times the loss at t = 0 fails the run: the gradient flow never "
             "raises the loss, so the step left it (0: never)",
             0.0);
  return s;
}

MarkovParams markov_params(const Deck& deck) {
  MarkovParams p;
  p.data = deck.get_text("markov.data");
  MarkovChain& c = p.chain;
  c.lam = deck.get_real("markov.lambda");
  c.start_uniform = deck.get_text("markov.start") == "uniform";
  const std::vector<double> family = parse_real_list("markov.family_c", deck.get_text("markov.family_c"), true);
  if (family.empty()) {
    if (deck.get_real("markov.delta") != 0)
      throw InputError("markov.delta = " + deck.get_text("markov.delta") +
                       " acts only on the stage-IV family: give markov.family_c too (or leave delta at 0)");
    c.pi = parse_real_list("markov.pi", deck.get_text("markov.pi"));
  } else {
    c.pi = stage_four_pi(static_cast<int>(family.size()) + 1, deck.get_real("markov.family_pi1"), family,
                         deck.get_real("markov.delta"));
  }
  c.d = static_cast<int>(c.pi.size());
  if (p.data == "chain") check_chain(c, "markov.pi", "markov.lambda");
  p.s = deck.get_int("markov.s");
  p.loss = deck.get_text("markov.loss");
  p.samples = deck.get_int("markov.N");
  p.max_states = deck.get_int("markov.max_states");
  p.text_file = deck.get_text("markov.text_file");
  p.tokenizer = deck.get_text("markov.tokenizer");
  p.vocabulary_max = deck.get_int("markov.vocabulary_max");
  p.stride = deck.get_int("markov.stride");
  if (p.data == "text" && p.text_file.empty()) throw InputError("markov.data = text needs markov.text_file");
  p.shape.m = static_cast<int>(deck.get_int("model.m"));
  p.shape.mk = static_cast<int>(deck.get_int("model.mk"));
  p.shape.residual = deck.get_bool("model.residual");
  p.shape.tau = deck.get_text("model.tau") == "one" ? 1.0 : std::sqrt(static_cast<double>(p.shape.m));
  p.shape.d = c.d;
  p.eps = deck.get_real("model.eps");
  p.init_file = deck.get_text("model.init_file");
  p.stages = {deck.get_real("stages.loss_drop"), deck.get_real("stages.mass_rise"), deck.get_real("stages.mass_fall"),
              deck.get_real("stages.rank_ratio")};
  p.weights_every = deck.get_int("flow.weights_every");
  p.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  p.flow.method = deck.get_text("flow.method");
  p.flow.lr = deck.get_real("flow.lr");
  p.flow.rtol = deck.get_real("flow.rtol");
  p.flow.atol = deck.get_real("flow.atol");
  p.flow.first_step = deck.get_real("flow.first_step");
  p.flow.dense = deck.get_text("flow.output") == "dense";
  if (p.flow.dense && p.flow.method != "rk")
    throw InputError("flow.output = dense needs flow.method = rk (gradient descent records at whole steps)");
  p.time = deck.get_real("flow.time");
  p.records = deck.get_int("flow.records");
  p.divergence = deck.get_real("flow.divergence");
  if (p.flow.method == "gd") {
    // Each record interval must be a whole number of steps.
    const double steps = p.time / (static_cast<double>(p.records) * p.flow.lr);
    if (std::abs(steps - std::round(steps)) > 1e-9 * steps || std::round(steps) < 1)
      throw InputError("flow.method = gd: flow.time / (flow.records flow.lr) = " + std::to_string(steps) +
                       " must be a whole number of steps per record");
  }
  return p;
}

// The initial weights into theta: N(0, eps^2) from the run's seed, or model.init_file's: W0, WQ, WK, W1 at
// the file's root, or a markov run file's last stored weights (markov/weights_record and the embedding of that
// record). Their shapes are the deck's and every value finite, else InputError. Returns where they came from
// ("" for the random start). Collective.
std::string initial_weights(const Comm& comm, const MarkovParams& p, double* theta) {
  const OneLayerShape& s = p.shape;
  if (p.init_file.empty()) {
    initial_one_layer(s, p.eps, p.seed, theta);
    return "";
  }
  const std::string what = "model.init_file '" + p.init_file + "'";
  const std::int64_t d = s.d, m = s.m, mk = s.mk;
  std::string from = what;
  std::int64_t row = kWholeDataset, embedding_row = kWholeDataset;
  std::string prefix;
  if (matrix_file_has(p.init_file, "markov/weights_record", what, comm.get())) {
    const double record = read_matrix_file(p.init_file, "markov/weights_record", {}, kLastRow, what, comm.get())[0];
    prefix = "markov/", row = kLastRow, embedding_row = static_cast<std::int64_t>(record);
    from += ", record " + std::to_string(embedding_row);
  }
  const std::pair<const char*, std::vector<std::int64_t>> parts[] = {
      {"W0", {d, m}}, {"WQ", {m, mk}}, {"WK", {m, mk}}, {"W1", {m, d}}};
  const std::size_t offsets[] = {s.w0(), s.wq(), s.wk(), s.w1()};
  for (int i = 0; i < 4; ++i) {
    const bool w0 = i == 0 && !prefix.empty();  // a run file's W0 is its embedding series
    const std::vector<double> v =
        read_matrix_file(p.init_file, w0 ? "markov/embedding" : prefix + parts[i].first, parts[i].second,
                         w0 ? embedding_row : row, what, comm.get());
    for (std::size_t j = 0; j < v.size(); ++j)
      if (!std::isfinite(v[j]))
        throw InputError(what + ": " + parts[i].first + " holds NaN or Inf (entry " + std::to_string(j) + ")");
    std::copy(v.begin(), v.end(), theta + offsets[i]);
  }
  return from;
}

// The flow as a run state: record k at t_k = k T / R; the checkpoint holds theta, the time, the next
// step size and the step count (the integrator goes on from them).
class MarkovRun : public RunState {
 public:
  MarkovRun(const Comm& comm, const MarkovParams& p, SequenceItems items, std::vector<double> pi,
            std::vector<std::string> vocabulary)
      : comm_(comm), p_(p), items_(std::move(items)), pi_(std::move(pi)), vocabulary_(std::move(vocabulary)),
        flow_(comm.get(), p.shape, items_, p.flow), theta0_(p.shape.size()) {
    init_from_ = initial_weights(comm, p, theta0_.data());
    initial_ = conserved_quantities(p.shape, theta0_.data());
    flow_.set_interrupt([c = comm.get()] { return stop_requested(c); });
    const std::vector<double> G = stage_one_matrix(items_, p.shape.residual, comm.get());
    // sigma* and u_1(G) by Lanczos from a random start: a second or so at d = 5000, where two dense
    // eigensolves of d x d matrices took minutes without a signal poll.
    std::vector<double> start(p.shape.d);
    RandomStream(p.seed, Purpose::singular_start).normals(0, 0, start.data(), start.size());
    SingularTriplet top = top_singular_triplet(G.data(), p.shape.d, p.shape.d, start);
    sigma_star_ = top.value;
    g_direction_ = std::move(top.left);
    double a = 0, b = 0;
    for (double v : pi_) a += v * v, b += (v - 1.0 / p.shape.d) * (v - 1.0 / p.shape.d);
    sigma_1_ = std::sqrt(a * b);
    // The prediction is of the random start at scale eps; given weights have none.
    t_one_ = init_from_.empty() ? std::log(1 / (p.eps * p.eps * p.shape.m)) / (2 * sigma_star_) : NAN;
    for (int i = 1; i < p.shape.d; ++i)
      if (pi_[i] > pi_[top_]) top_ = i;
    start_ = MPI_Wtime();
  }

  std::int64_t steps() const override { return p_.records; }
  std::string unit() const override { return "record"; }
  void start() override {
    flow_.set_state(theta0_, 0.0, p_.flow.method == "gd" ? p_.flow.lr : p_.flow.first_step, 0);
  }

  void begin(RunFile& file) override {
    RunGroup g = file.group("markov");
    g.write("pi", pi_);
    g.write("g_direction", g_direction_);
    g.attribute("sigma_star", sigma_star_);
    g.attribute("sigma_1", sigma_1_);
    g.attribute("t_I_predicted", t_one_);
    g.attribute("items", items_.n_global);
    std::string vocab;
    for (const std::string& v : vocabulary_) vocab += v + "\n";
    if (!vocab.empty()) g.attribute("vocabulary", vocab);
    char line[256];
    std::snprintf(line, sizeof line,
                  "stage I: sigma* = %.6f (top singular value of G), sigma_1 = |pi| |pi - 1/d| = %.6f; predicted "
                  "t_I = ln(1/(eps^2 m)) / (2 sigma*) = %.4g",
                  sigma_star_, sigma_1_, t_one_);
    // Given weights have no predicted t_I (it is of the random start at scale eps).
    std::string text = line;
    if (!init_from_.empty()) text = text.substr(0, text.find("; predicted")) + "; the weights start from " + init_from_;
    comm_.print(text);
    observe(0, file);
    comm_.print(record_line_);
  }

  // A signal during a record stops it between two integrator steps and puts the flow back at the record's
  // start: the run checkpoints record k at once (a record of many steps need not outlast Slurm's lead
  // time), and the resumed run takes the whole record again, as the uninterrupted one did.
  std::int64_t advance(std::int64_t k) override {
    const FlowCheckpoint start = flow_.checkpoint();
    const std::int64_t evaluations = flow_.evaluations();
    const bool done =
        p_.flow.method == "gd"
            ? flow_.advance_steps(static_cast<std::int64_t>(std::llround(p_.time / (p_.records * p_.flow.lr))))
            : flow_.advance_to(p_.time * static_cast<double>(k + 1) / static_cast<double>(p_.records));
    if (done) return k + 1;
    flow_.resume(start);
    flow_.set_evaluations(evaluations);
    return k;
  }

  std::string observe(std::int64_t k, RunFile& file) override {
    theta_ = flow_.theta();
    // Weights that overflowed have no observables (their eigen-decompositions fail): the run's poll fails it.
    if (!finite()) return nonfinite_message(k);
    grad_.resize(theta_.size());  // for the focus rate
    const OneLayerEvaluation e = evaluate_one_layer(p_.shape, theta_.data(), items_, grad_.data(), comm_.get());
    const MarkovObservables o = markov_observables(p_.shape, theta_.data(), e, pi_, g_direction_, initial_);
    // The attention's spread over the vocabulary (entropy is over positions).
    double token_entropy = 0;
    for (double v : o.mass)
      if (v > 0) token_entropy -= v * std::log(v);
    token_entropy /= std::log(static_cast<double>(p_.shape.d));
    DiagnosticsRow row;
    row.layer = k;
    row.time = flow_.time();
    row.scalars = {{"loss", o.loss},        {"entropy", o.entropy},   {"token_entropy", token_entropy},   {"cos_w0_pi", o.cos_w0_pi},
                   {"cos_w1_pi", o.cos_w1_pi}, {"cos_phi", o.cos_phi}, {"cos_w0_g", o.cos_w0_g}, {"drift_cm", o.drift_m},
                   {"drift_ck", o.drift_k},  {"norm_wq", o.norm_wq},   {"norm_wk", o.norm_wk},
                   {"focus_rate", o.focus_rate}, {"qk_rate", o.qk_rate},
                   {"steps", static_cast<double>(flow_.steps())},
                   {"evaluations", static_cast<double>(flow_.evaluations())}};
    file.write_diagnostics(row);
    const std::pair<const char*, const std::vector<double>*> series[] = {
        {"mass", &o.mass}, {"sv_w0", &o.sv_w0}, {"sv_w1", &o.sv_w1}, {"sv_wq", &o.sv_wq},
        {"sv_wk", &o.sv_wk}, {"w0_row_norms", &o.row_norms}};
    RunGroup g = file.group("markov");
    const hsize_t mine = comm_.root() ? 1 : 0;
    for (const auto& [name, v] : series)
      g.write_row(name, {hsize_t(v->size())}, hsize_t(k), v->data(), 0, mine * v->size());
    const hsize_t d = p_.shape.d, m = p_.shape.m;
    g.write_row("embedding", {d, m}, hsize_t(k), theta_.data() + p_.shape.w0(), 0, mine * d);
    const std::int64_t stored = stored_record_row(k, p_.weights_every, p_.records);
    if (stored >= 0) {
      const hsize_t mk = p_.shape.mk, r = hsize_t(stored);
      g.write_row("WQ", {m, mk}, r, theta_.data() + p_.shape.wq(), 0, mine * m);
      g.write_row("WK", {m, mk}, r, theta_.data() + p_.shape.wk(), 0, mine * m);
      g.write_row("W1", {m, d}, r, theta_.data() + p_.shape.w1(), 0, mine * m);
      const std::int64_t record = k;
      g.write_row("weights_record", {}, r, &record, 0, mine);
    }
    char line[320];
    std::snprintf(line, sizeof line,
                  "record %lld/%lld: t = %.4g, loss %.6f, entropy %.4f, mass[0] %.4f, cos(u1(W0), pi) %.4f, |WQ| %.3g, "
                  "%lld steps [%.1f s]",
                  static_cast<long long>(k), static_cast<long long>(p_.records), flow_.time(), o.loss, o.entropy,
                  o.mass.empty() ? 0.0 : o.mass[0], o.cos_w0_pi, o.norm_wq, static_cast<long long>(flow_.steps()),
                  MPI_Wtime() - start_);
    record_line_ = line;
    last_loss_ = o.loss;
    series_.time.push_back(flow_.time());
    series_.loss.push_back(o.loss);
    series_.top_mass.push_back(o.mass[top_]);
    series_.norm_wq.push_back(o.norm_wq);
    series_.sv0.push_back(o.sv_w0[0]);
    series_.sv1.push_back(o.sv_w0.size() > 1 ? o.sv_w0[1] : 0.0);
    series_.g_norm.push_back(along_g(theta_));
    series_.focus_rate.push_back(o.focus_rate);
    char at[96];
    std::snprintf(at, sizeof at, "record %lld (t = %.6g)", static_cast<long long>(k), flow_.time());
    if (!std::isfinite(o.loss)) return std::string("the loss is NaN or Inf at ") + at + " (lower flow.lr or flow.rtol)";
    if (p_.divergence > 0 && k > 0 && o.loss > p_.divergence * series_.loss.front()) {
      char line[256];
      std::snprintf(line, sizeof line, "the flow diverged at %s: loss %.6g, more than flow.divergence = %g times the "
                    "loss %.6g at t = 0 (lower flow.lr or flow.rtol)", at, o.loss, p_.divergence, series_.loss.front());
      return line;
    }
    return "";
  }

  std::string record_line() const override { return record_line_; }

  bool finite() const override {
    for (double v : theta_)
      if (!std::isfinite(v)) return false;
    return true;
  }
  std::string nonfinite_message(std::int64_t k) const override {
    return "NaN or Inf in the weights after record " + std::to_string(k) + " (lower flow.lr or flow.rtol)";
  }

  void save(CheckpointWriter& out) const override {
    const FlowCheckpoint c = flow_.checkpoint();
    out.values("theta", c.theta);
    out.attribute("time", c.time);
    out.attribute("step", c.step);
    out.attribute("steps", c.steps);
    out.attribute("replay", static_cast<std::int64_t>(c.replay));
    out.attribute("record_time", c.record_time);
    out.attribute("evaluations", flow_.evaluations());
    for (const auto& [name, v] : stage_series(series_)) out.values(name, *v);
  }
  void restore(const CheckpointReader& in, RunFile&) override {
    FlowCheckpoint c;
    c.theta = in.values("theta", p_.shape.size());
    c.time = in.real_attribute("time");
    c.step = in.real_attribute("step");
    c.steps = in.int_attribute("steps");
    c.replay = in.int_attribute("replay") != 0;
    c.record_time = in.real_attribute("record_time");
    flow_.resume(c);
    flow_.set_evaluations(in.int_attribute("evaluations"));
    theta_ = flow_.theta();
    // One entry per record, record 0 included.
    const std::size_t records = static_cast<std::size_t>(in.identity().step) + 1;
    // A checkpoint of an earlier tokdyn lacks the focus rate: NaN, so the run reports no prediction.
    for (const auto& [name, v] : stage_series(series_))
      *v = in.has(name) ? in.values(name, records) : std::vector<double>(records, NAN);
    last_loss_ = series_.loss.back();
  }

  void finish(RunFile& file) override {
    RunGroup g = file.group("markov");
    write_stages(g);
    g.attribute("final_loss", last_loss_);
    g.attribute("steps", flow_.steps());
    g.attribute("evaluations", flow_.evaluations());
    char line[256];
    std::snprintf(line, sizeof line, "flow to t = %.6g: loss %.8f, %lld steps, %lld gradient evaluations",
                  flow_.time(), last_loss_, static_cast<long long>(flow_.steps()),
                  static_cast<long long>(flow_.evaluations()));
    comm_.print(line);
  }

  double state_bytes() const override {
    return 8.0 * static_cast<double>(p_.shape.size() + 7 * series_.time.size());
  }

 private:
  // The per-record series the stage detection reads, by their checkpoint names (S: StageSeries, const or not).
  template <class S>
  static auto stage_series(S& s) -> std::vector<std::pair<const char*, decltype(&s.time)>> {
    return {{"stage_time", &s.time},           {"stage_loss", &s.loss}, {"stage_top_mass", &s.top_mass},
            {"stage_norm_wq", &s.norm_wq}, {"stage_sv0", &s.sv0},   {"stage_sv1", &s.sv1},
            {"stage_g_norm", &s.g_norm}, {"stage_focus_rate", &s.focus_rate}};
  }

  // |u_1(G)^T W0| [m]: the size of W0 along the direction it grows in during stage I.
  double along_g(const std::vector<double>& theta) const {
    const int d = p_.shape.d, m = p_.shape.m;
    double norm = 0;
    for (int j = 0; j < m; ++j) {
      double v = 0;
      for (int i = 0; i < d; ++i) v += g_direction_[i] * theta[p_.shape.w0() + static_cast<std::size_t>(i) * m + j];
      norm += v * v;
    }
    return std::sqrt(norm);
  }

  // The onsets with each threshold halved and doubled (the others kept): [threshold (loss_drop, mass_rise,
  // mass_fall, rank_ratio), factor (1/2, 2), onset (t_I .. t_IV)], NaN where not reached.
  std::vector<double> stage_sensitivity(double log_d) const {
    const double StageOnsets::*field[] = {&StageOnsets::condensation, &StageOnsets::focus, &StageOnsets::dilution,
                                          &StageOnsets::new_direction};
    double StageThresholds::*knob[] = {&StageThresholds::loss_drop, &StageThresholds::mass_rise,
                                       &StageThresholds::mass_fall, &StageThresholds::rank_ratio};
    std::vector<double> out;
    for (double StageThresholds::*k : knob)
      for (double factor : {0.5, 2.0}) {
        StageThresholds th = p_.stages;
        th.*k *= factor;
        const StageOnsets o = detect_stages(series_, log_d, th);
        for (const double StageOnsets::*f : field) out.push_back(o.*f);
      }
    return out;
  }

  // How much the onsets owe to the thresholds (stage_sensitivity): the range of every onset over the eight; and a
  // warning for an onset read between records more than a quarter of it apart.
  void print_stage_sensitivity(const std::vector<double>& sensitivity, const StageOnsets& s) const {
    const double StageOnsets::*field[] = {&StageOnsets::condensation, &StageOnsets::focus, &StageOnsets::dilution,
                                          &StageOnsets::new_direction};
    const char* names[] = {"t_I", "t_II", "t_III", "t_IV"};
    double low[4], high[4];
    int missing[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; ++i) low[i] = INFINITY, high[i] = -INFINITY;
    for (std::size_t v = 0; v < sensitivity.size(); ++v) {
      const double t = sensitivity[v];
      const std::size_t i = v % 4;
      if (std::isnan(t)) ++missing[i];
      else low[i] = std::min(low[i], t), high[i] = std::max(high[i], t);
    }
    std::string text = "stage onsets with each threshold halved and doubled (stages.*):";
    for (int i = 0; i < 4; ++i) {
      char part[96];
      if (missing[i] == 8)
        std::snprintf(part, sizeof part, " %s not reached", names[i]);
      else
        std::snprintf(part, sizeof part, " %s %.4g-%.4g%s", names[i], low[i], high[i],
                      missing[i] ? (" (not reached in " + std::to_string(missing[i]) + " of 8)").c_str() : "");
      text += std::string(i ? "," : "") + part;
    }
    comm_.print(text);
    for (int i = 0; i < 4; ++i) {
      const double t = s.*field[i], spacing = record_spacing_at(series_, t);
      if (std::isfinite(t) && spacing > 0.25 * t) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "warning: %s = %.4g is read between records %.4g apart, more than a quarter of it: the records "
                      "are too coarse to place it (raise flow.records)",
                      names[i], t, spacing);
        comm_.print(line);
      }
    }
  }

  // The growth of |WQ| before focus next to the focus rate (stages.hpp).
  void print_focus_growth(const StageOnsets& s) const {
    char line[320];
    if (std::isnan(s.focus_growth.value)) {
      std::snprintf(line, sizeof line, "focus: growth of |WQ| not measured (%s)",
                    std::isnan(s.focus) ? "t_II not reached" : "fewer than 3 records in the second half of [t_I, t_II]; raise flow.records");
      comm_.print(line);
      return;
    }
    if (std::isnan(s.focus_rate)) {  // resumed from a checkpoint of a tokdyn without the rate
      std::snprintf(line, sizeof line,
                    "focus: |WQ| grows at %.6f [%.6f, %.6f] over the second half of [t_I, t_II]; the focus rate is "
                    "not known there (the run resumed from a checkpoint without it)",
                    s.focus_growth.value, s.focus_growth.low, s.focus_growth.high);
      comm_.print(line);
      return;
    }
    const double gap = s.focus_growth.value / s.focus_rate - 1;
    std::snprintf(line, sizeof line,
                  "focus: |WQ| grows at %.6f [%.6f, %.6f] over the second half of [t_I, t_II] against the focus rate "
                  "sigma_max(W0^T H W0) = %.6f there (%+.2f %%)%s",
                  s.focus_growth.value, s.focus_growth.low, s.focus_growth.high, s.focus_rate, 100 * gap,
                  std::abs(gap) > 0.05 ? ": they disagree by more than 5 %" : "");
    comm_.print(line);
  }

  // The onsets by the written criteria, the stage-I rate and the focus growth next to their predictions.
  void write_stages(RunGroup& g) const {
    const double log_d = std::log(static_cast<double>(p_.shape.d));
    const StageOnsets s = detect_stages(series_, log_d, p_.stages);
    const std::pair<const char*, double> onsets[] = {{"t_I", s.condensation}, {"t_II", s.focus},
                                                     {"t_III", s.dilution},   {"t_IV", s.new_direction}};
    for (const auto& [name, v] : onsets) g.attribute(name, v);
    g.write("stage_I_rate", {s.rate.value, s.rate.low, s.rate.high});
    g.write("focus_growth", {s.focus_growth.value, s.focus_growth.low, s.focus_growth.high});
    g.attribute("focus_rate", s.focus_rate);
    const std::vector<double> sensitivity = stage_sensitivity(log_d);
    g.write("onset_sensitivity", sensitivity, {4, 2, 4});
    g.attribute("stage_criteria", stage_criteria(p_.stages));
    auto when = [](double t) {
      char b[32];
      std::snprintf(b, sizeof b, "%.4g", t);
      return std::isnan(t) ? std::string("not reached") : std::string(b);
    };
    comm_.print("stages: condensation t_I = " + when(s.condensation) + " (predicted " + when(t_one_) +
                "), focus t_II = " + when(s.focus) + ", dilution t_III = " + when(s.dilution) +
                ", new direction t_IV = " + when(s.new_direction));
    print_stage_sensitivity(sensitivity, s);
    print_stage_one_rate(s);
    print_focus_growth(s);
  }

  // The stage-I growth rate of W0 next to sigma*.
  void print_stage_one_rate(const StageOnsets& s) const {
    char line[256];
    if (std::isnan(s.rate.value))
      std::snprintf(line, sizeof line,
                    "stage-I growth rate of W0 along u_1(G): not measured (fewer than 3 records in [t_I/4, 3 t_I/4]%s; "
                    "raise flow.records) against sigma* = %.6f",
                    std::isnan(s.condensation) ? ", t_I not reached" : "", sigma_star_);
    else
      std::snprintf(line, sizeof line,
                    "stage-I growth rate of W0 along u_1(G): %.6f [%.6f, %.6f] against sigma* = %.6f (%+.2f %%)%s",
                    s.rate.value, s.rate.low, s.rate.high, sigma_star_, 100 * (s.rate.value / sigma_star_ - 1),
                    std::abs(s.rate.value / sigma_star_ - 1) > 0.02 ? ": they disagree by more than 2 %" : "");
    comm_.print(line);
  }

  const Comm& comm_;
  const MarkovParams& p_;
  SequenceItems items_;
  std::vector<double> pi_, g_direction_;
  std::vector<std::string> vocabulary_;
  GradientFlow flow_;
  std::vector<double> theta0_, theta_, grad_;
  Conserved initial_;
  StageSeries series_;
  int top_ = 0;  // the most frequent token
  double sigma_star_ = 0, sigma_1_ = 0, t_one_ = 0, last_loss_ = NAN, start_ = 0;
  std::string record_line_;  // of the last observe()
  std::string init_from_;    // where the initial weights came from ("": N(0, eps^2))
};

MarkovStudy::MarkovStudy(const Comm& comm, const Deck& deck) : comm_(comm), params_(markov_params(deck)) {
  if (params_.data == "text") {
    text_ = tokenize_text(comm, params_.text_file, params_.tokenizer == "bytes", "markov.text_file",
                          memory_per_rank(comm, max_memory_from_deck(deck)));
    if (params_.tokenizer == "words") to_words(text_, params_.vocabulary_max, "markov.text_file");
    params_.shape.d = static_cast<int>(text_.vocabulary.size());
    items_ = text_windows(text_, params_.s, params_.stride);
    if (items_ == 0)
      throw InputError("markov.text_file '" + params_.text_file + "' is shorter than markov.s + 1 tokens");
  } else if (params_.loss == "population") {
    items_ = population_states(params_.shape.d, params_.s);  // an upper bound until the law is built
    if (items_ > params_.max_states)
      throw InputError("markov.loss = population: " + std::to_string(items_) + " (last token, counts) states for d = " +
                       std::to_string(params_.shape.d) + ", s = " + std::to_string(params_.s) +
                       " exceed markov.max_states = " + std::to_string(params_.max_states) + " (use markov.loss = sample)");
  } else {
    items_ = params_.samples;
  }
}

MarkovStudy::~MarkovStudy() = default;

MemoryEstimate MarkovStudy::memory() const {
  const double d = params_.shape.d, n = static_cast<double>(items_);
  MemoryEstimate memory;
  memory.add("items: counts and targets [n/P, d] x 2", 2 * n / comm_.size() * (d + 1));
  if (params_.data == "chain" && params_.loss == "population")
    memory.add("the dynamic program's two levels (every rank)", 2 * n * 8, 8);
  memory.add("weights, gradient and TS stages [size] x 12", 12.0 * static_cast<double>(params_.shape.size()));
  memory.add("an evaluation: S, M, dS, dM [d, d] and the reduction's copy of dS, dM", 6 * d * d);
  memory.add("the stage-I matrix G [d, d] and its Lanczos vectors [65, d] x 2", d * d + 130 * d);
  return memory;
}

RunState& MarkovStudy::setup() {
  SequenceItems items;
  std::vector<double> pi = params_.chain.pi;
  if (params_.data == "text") {
    const Partition part(items_, comm_.size());
    items = text_items(text_, params_.s, params_.stride, part, comm_.rank());
    // The reference law of a text: its token frequencies.
    pi.assign(params_.shape.d, 0.0);
    for (int t : text_.tokens) pi[t] += 1.0 / static_cast<double>(text_.tokens.size());
  } else if (params_.loss == "population") {
    items = population_items(params_.chain, params_.s, comm_.size(), comm_.rank(), params_.max_states);
    items_ = items.n_global;
  } else {
    items = sample_items(params_.chain, params_.s, params_.samples, params_.seed, Partition(params_.samples, comm_.size()),
                         comm_.rank());
  }
  state_ = std::make_unique<MarkovRun>(comm_, params_, std::move(items), std::move(pi), text_.vocabulary);
  return *state_;
}

std::string MarkovStudy::banner() const {
  char line[320];
  std::snprintf(line, sizeof line,
                "tokdyn markov: %s, d = %d, s = %lld, %s loss (%lld items), m = %d, mk = %d, tau = %g%s, eps = %g, %s flow "
                "to T = %g",
                params_.data == "text" ? ("text '" + params_.text_file + "'").c_str() : "Markov chain", params_.shape.d,
                static_cast<long long>(params_.s), params_.data == "text" ? "sample" : params_.loss.c_str(),
                static_cast<long long>(items_), params_.shape.m, params_.shape.mk, params_.shape.tau,
                params_.shape.residual ? ", residual" : "", params_.eps, params_.flow.method.c_str(), params_.time);
  return line;
}

}  // namespace tokdyn
