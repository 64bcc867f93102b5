#include "tokdyn/studies/lens_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/console/progress.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/power/alignment.hpp"
#include "tokdyn/power/embedding_tokens.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/weights/train_weights.hpp"

namespace tokdyn {
namespace {

// What /lens holds (io/outputs.hpp): declared here, beside the code that writes it.
constexpr OutputDecl kLensOutputs[] = {
    {"lens/step", OutputType::integer, "step", "point",
     "The optimizer step of each point looked at (a step of the train run's train/parameters_step, or its last "
     "step for the end)."},
    {"lens/lambda1", OutputType::real, "1", "point, layer",
     "|lambda_1(F)| of each layer's F = O V (all heads), LAPACK dgeev."},
    {"lens/gap", OutputType::real, "1", "point, layer",
     "Spectral gap 1 - |lambda_2| / |lambda_1| of each layer's F (|lambda_3| for a complex leading pair)."},
    {"lens/lambda1_acting", OutputType::real, "1", "point, layer",
     "|lambda_1| of the matrix M that acts on the tokens: I + F with lens.residual, else F."},
    {"lens/gap_acting", OutputType::real, "1", "point, layer",
     "Spectral gap of M: the power method shrinks the sine of a token's angle to v_1 by 1 - gap_acting per layer."},
    {"lens/head_lambda1", OutputType::real, "1", "point, layer, head",
     "|lambda_1(F_h)| of each head's F_h = O_h V_h (rank d_h)."},
    {"lens/head_gap", OutputType::real, "1", "point, layer, head", "Spectral gap of each head's F_h."},
    {"lens/gamma_mean", OutputType::real, "1", "point, layer",
     "Mean over the vocabulary's tokens of |<x_i, v_1>| after the layer, v_1 the leading eigenvector of the layer's "
     "acting matrix (or |P_S x_i| for a complex pair); the tokens start as the normalised embeddings of every id."},
    {"lens/gamma_in_mean", OutputType::real, "1", "point, layer",
     "The same for the layer's input against that layer's v_1."},
    {"lens/rho", OutputType::real, "1", "point, layer",
     "Fraction of tokens whose angle to the layer's v_1 shrinks through the layer."},
    {"lens@run", OutputType::text, "", "", "The train run file looked at (lens.run)."},
    {"lens@label", OutputType::text, "", "", "Its optimizer and symmetry setting (\"ecd, b_Q + b_V\")."},
    {"lens@baseline", OutputType::real, "1", "",
     "sqrt(2 / (pi d)): E|<x, v>| for x uniform on the sphere, the alignment of tokens with no preferred direction."},
    {"lens@tokens", OutputType::integer, "count", "", "Tokens sent through the layers: every id of the vocabulary."},
    {"lens@attention", OutputType::text, "", "", "The attention style of the layers (lens.attention)."},
};
const DeclaredOutputs kLensDeclared("lens", kLensOutputs);

std::string step_text(std::int64_t step) { return step < 0 ? "last" : std::to_string(step); }

}  // namespace

// One step per point: the model there, its spectra and the vocabulary through its layers; a row of /lens.
class LensRun : public RunState {
 public:
  LensRun(const Comm& comm, const LensParams& p, int d, int heads, int layers)
      : comm_(comm), p_(p), d_(d), heads_(heads), layers_(layers), start_(MPI_Wtime()) {}

  std::int64_t steps() const override { return static_cast<std::int64_t>(p_.steps.size()); }
  std::string unit() const override { return "point"; }
  void begin(RunFile&) override {}
  std::int64_t advance(std::int64_t k) override {
    look(p_.steps[static_cast<std::size_t>(k)]);
    return k + 1;
  }
  std::string observe(std::int64_t done, RunFile& file) override {
    record(file, done - 1);
    return "";
  }
  bool finite() const override { return true; }  // the parameters were checked when read
  void save(CheckpointWriter&) const override {}  // the rows are the state (in the checkpoint's run file)
  void restore(const CheckpointReader&, RunFile&) override {}
  void finish(RunFile& file) override {
    RunGroup g = file.group("lens");
    g.attribute("run", p_.run);
    g.attribute("label", p_.label);
    g.attribute("baseline", random_alignment_baseline(d_, false));
    g.attribute("tokens", tokens_);
    g.attribute("attention", p_.layer.attention);
  }

 private:
  // The model at `step` (-1: the end): per layer the spectra of F and its heads, then the layer applied.
  void look(std::int64_t step) {
    const std::unique_ptr<WeightSource> source =
        read_collectively(comm_.get(), [&] { return open_train_weights(p_.run, step_text(step), 0, 0); });
    std::vector<std::int64_t> ids(static_cast<std::size_t>(source->vocab_size()));
    std::iota(ids.begin(), ids.end(), 0);
    tokens_ = static_cast<std::int64_t>(ids.size());
    Partition partition(1, 1);
    std::vector<double> x = embedding_tokens(ids, comm_, *source, d_, partition);
    PowerLayer layer(comm_.get(), partition, d_, source->heads() * source->head_dim(), p_.layer);
    const std::size_t L = layers_, H = heads_;
    row_ = Row{};
    row_.lambda1.resize(L), row_.gap.resize(L), row_.acting.resize(L), row_.acting_gap.resize(L), row_.gamma.resize(L), row_.gamma_in.resize(L);
    row_.rho.resize(L), row_.head_lambda1.resize(L * H), row_.head_gap.resize(L * H);
    for (std::size_t l = 0; l < L; ++l) {
      const LayerWeights w = source->layer(static_cast<std::int64_t>(l));  // in memory on every rank
      const std::vector<double> f = layer_matrix(w);
      const LeadingDirection lead = leading_direction(d_, f, false);
      const LeadingDirection acting = p_.layer.residual ? leading_direction(d_, f, true) : lead;
      row_.lambda1[l] = lead.modulus, row_.gap[l] = lead.gap, row_.acting[l] = acting.modulus;
      row_.acting_gap[l] = acting.gap;
      for (std::size_t h = 0; h < H; ++h) {
        const LeadingDirection one = leading_direction(d_, head_matrix(w, static_cast<int>(h)), false);
        row_.head_lambda1[l * H + h] = one.modulus, row_.head_gap[l * H + h] = one.gap;
      }
      const std::vector<double> before = x;
      layer.apply(w, static_cast<std::int64_t>(l), x.data());
      const LayerAlignment a = layer_alignment(comm_.get(), partition, acting, before.data(), x.data());
      row_.gamma[l] = a.gamma_mean, row_.gamma_in[l] = a.gamma_in_mean, row_.rho[l] = a.rho;
    }
    row_.step = step < 0 ? p_.last_step : step;
  }

  void record(RunFile& file, std::int64_t k) {
    RunGroup g = file.group("lens");
    const hsize_t mine = comm_.root() ? 1 : 0, L = layers_, H = heads_, row = hsize_t(k);
    g.write_row("step", {}, row, &row_.step, 0, mine);
    const std::pair<const char*, const std::vector<double>*> per_layer[] = {
        {"lambda1", &row_.lambda1}, {"gap", &row_.gap}, {"lambda1_acting", &row_.acting}, {"gap_acting", &row_.acting_gap},
        {"gamma_mean", &row_.gamma}, {"gamma_in_mean", &row_.gamma_in}, {"rho", &row_.rho}};
    for (const auto& [name, v] : per_layer) g.write_row(name, {L}, row, v->data(), 0, mine * L);
    g.write_row("head_lambda1", {L, H}, row, row_.head_lambda1.data(), 0, mine * L);
    g.write_row("head_gap", {L, H}, row, row_.head_gap.data(), 0, mine * L);
    std::string lambdas, gaps;
    char item[48];
    for (std::size_t l = 0; l < row_.lambda1.size(); ++l) {
      std::snprintf(item, sizeof item, " %.4g", row_.lambda1[l]);
      lambdas += item;
      std::snprintf(item, sizeof item, " %.3f", row_.gap[l]);
      gaps += item;
    }
    const double elapsed = MPI_Wtime() - start_;
    const double remaining = elapsed / static_cast<double>(k + 1) * static_cast<double>(steps() - k - 1);
    char line[512];
    std::snprintf(line, sizeof line,
                  "step %lld (%lld/%lld): |lambda_1(F)| per layer%s, gap%s; alignment after the last layer %.4f "
                  "(random %.4f); elapsed %s, remaining %s",
                  static_cast<long long>(row_.step), static_cast<long long>(k + 1), static_cast<long long>(steps()),
                  lambdas.c_str(), gaps.c_str(), row_.gamma.back(), random_alignment_baseline(d_, false),
                  format_seconds(elapsed).c_str(), format_seconds(remaining).c_str());
    comm_.print(line);
  }

 private:
  struct Row {
    std::int64_t step = 0;
    std::vector<double> lambda1, gap, acting, acting_gap, gamma, gamma_in, rho, head_lambda1, head_gap;
  };
  const Comm& comm_;
  const LensParams& p_;
  int d_, heads_, layers_;
  double start_;
  std::int64_t tokens_ = 0;
  Row row_;
};

DeckSchema LensStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "lens.h5");
  add_tile_key(s);
  s.add_file("lens.run", "", "the tokdyn train run file to look at (its parameters stored with train.parameters_every)");
  s.add_text("lens.steps", "all",
             "the points: all (every step the run stored, or the end when it stored none), last (the end), or a comma "
             "list of stored steps");
  s.add_choice("lens.attention", "softmax", attention_styles().names(),
               "A^h of the power-method layers (the model's own softmax attention, or another registered style)");
  s.add_bool("lens.causal", false,
             "mask j > i by token id (the vocabulary is a set, not a sequence: off, every token sees every other)");
  s.add_bool("lens.residual", true, "x_i + attention (the acting matrix is I + F) or attention alone");
  return s;
}

LensStudy::LensStudy(const Comm& comm, const Deck& deck) : comm_(comm) {
  p_.run = deck.get_text("lens.run");
  if (p_.run.empty()) throw InputError("tokdyn lens needs lens.run, a train run file");
  p_.layer.attention = deck.get_text("lens.attention");
  p_.layer.causal = deck.get_bool("lens.causal");
  p_.layer.residual = deck.get_bool("lens.residual");
  p_.layer.tile = static_cast<int>(deck.get_int("run.tile"));
  const TrainRunInfo info = read_collectively(comm.get(), [&] { return train_run_info(p_.run); });
  const std::vector<std::int64_t>& stored = info.stored_steps;
  p_.label = info.label, p_.last_step = info.last_step;
  const std::string asked = deck.get_text("lens.steps");
  if (asked == "last") {
    p_.steps = {-1};
  } else if (asked == "all") {
    p_.steps = stored.empty() ? std::vector<std::int64_t>{-1} : stored;
  } else {
    p_.steps = parse_index_list("lens.steps", asked, "an optimizer step");
    for (std::int64_t s : p_.steps)
      if (std::find(stored.begin(), stored.end(), s) == stored.end())
        throw InputError("deck key 'lens.steps': '" + p_.run + "' stores no parameters at step " + std::to_string(s));
  }
  const std::unique_ptr<WeightSource> end =
      read_collectively(comm.get(), [&] { return open_train_weights(p_.run, "last", 0, 0); });
  d_ = end->d(), heads_ = end->heads(), layers_ = static_cast<int>(end->layers()), vocab_ = end->vocab_size();
}

LensStudy::~LensStudy() = default;

MemoryEstimate LensStudy::memory() const {
  const double d = d_, V = static_cast<double>(vocab_), P = comm_.size();
  MemoryEstimate memory;
  memory.add("the model's parameters, read whole per point (about 12 d^2 per layer + (V + context) d)",
             12 * d * d * layers_ + 2 * V * d);
  memory.add("F, its eigenvectors and LAPACK's work [d, d] x 5", 5 * d * d);
  memory.add("tokens [V/P, d] and the layer's products x 3", 3 * V * d / P);
  return memory;
}

RunState& LensStudy::setup() {
  state_ = std::make_unique<LensRun>(comm_, p_, d_, heads_, layers_);
  return *state_;
}

std::string LensStudy::banner() const {
  char line[512];
  std::snprintf(line, sizeof line,
                "tokdyn lens: '%s' (%s), GPT L = %d, H = %d, C = %d, vocabulary %lld; %zu point%s; %s attention%s%s",
                p_.run.c_str(), p_.label.c_str(), layers_, heads_, d_, static_cast<long long>(vocab_), p_.steps.size(),
                p_.steps.size() == 1 ? "" : "s", p_.layer.attention.c_str(), p_.layer.causal ? " (causal)" : "",
                p_.layer.residual ? ", residual (I + F acts)" : "");
  return line;
}

}  // namespace tokdyn
