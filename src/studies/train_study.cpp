#include "tokdyn/studies/train_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/run/paths.hpp"
#include "tokdyn/train/gpt.hpp"
#include "tokdyn/train/optimizer.hpp"
#include "train_run.hpp"

namespace tokdyn {

DeckSchema TrainStudy::schema() {
  DeckSchema s;
  add_run_keys(s, "train.h5");
  s.add_choice("train.data", "text", {"text", "markov"}, "training data: a text file, or a sample path of a Markov chain");
  s.add_file("train.text_file", "", "text: a UTF-8 file");
  s.add_choice("train.tokenizer", "chars", {"chars", "bytes", "words"},
               "text: tokens are characters, bytes, or words (runs of letters and digits; each punctuation mark a "
               "token; whitespace separates)");
  s.add_int("train.vocabulary_max", 0,
            "words: the most frequent vocabulary_max - 1 words kept, the rest one token <unk> (0: every word)", 0);
  s.add_real("train.validation", 0.1, "the last fraction of the tokens held out for validation", 0.0, 1.0, true)
      .max_exclusive = true;  // some tokens must be left to train on
  s.add_text("train.markov_pi", "0.4, 0.3, 0.2, 0.1", "markov: stationary law pi (comma list; the vocabulary is its length)");
  s.add_real("train.markov_lambda", 0.5, "markov: probability of repeating the last token", 0.0, 1.0).max_exclusive =
      true;  // lambda = 1 repeats the first token for ever: no stationary law
  s.add_int("train.markov_tokens", 200000, "markov: length of the sample path (from the seed)", 2);
  s.add_int("train.steps", 1000, "optimizer steps", 1);
  s.add_int("train.parameters_every", 0,
            "all parameters to train/parameters at every k-th record, the first and the last included (0: none; "
            "train/final_parameters holds the end either way)",
            0);
  s.add_bool("train.export", false,
             "at the end, the trained parameters as a GPT-2 safetensors file beside the run file (OUTPUT.h5 -> "
             "OUTPUT.safetensors; HuggingFace's GPT-2 names and layout: tokdyn weights, spectrum and power read it "
             "with weights.format = gpt2)");
  s.add_file("model.init_file", "",
             "initial parameters instead of GPT-2's random ones: a train run file (train/final_parameters) or a GPT-2 "
             "safetensors file, of this deck's shape");
  s.add_int("train.batch", 8, "sequences per step (spread over the ranks)", 1);
  s.add_int("train.context", 64, "tokens per sequence n (the model's context)", 1, 1 << 16);
  s.add_int("train.eval_every", 50, "steps per record (validation loss, charges; train.steps must be a multiple)", 1);
  s.add_int("train.eval_sequences", 32,
            "validation sequences, evenly spaced over the validation part (the same at every record and seed)", 1);
  s.add_real("train.ema", 0.1, "weight of the newest value in the smoothed (EMA) losses", 0.0, 1.0, true);
  s.add_choice("train.eval_biases", "means", {"means", "last"},
               "validation with the biases' means, or with the last training step's sampled biases (the authors' code)");
  s.add_choice("train.optimizer", "ecd", optimizers().names(), "the optimizer (its keys: the section of its name)");
  s.add_choice("train.precision", "float", {"float", "double"},
               "parameters, activations, gradient and optimizer state (statistics and sums over rows in double)");
  s.add_int("train.alignment_null", 1000, "random directions of the key-bias alignment's null", 1);
  s.add_int("train.alignment_top", 8, "tokens listed per head by largest |cos(W_K e_t, mean b_Q)|", 1);
  s.add_choice("train.alignment_inputs", "layer", {"layer", "embedding"},
               "e_t of the key-bias alignment: what each layer's attention reads for token t (LN_1 of its input, "
               "averaged over the validation sequences) or the raw token embedding");
  s.add_int("model.layers", 2, "transformer blocks L", 1, 1024);
  s.add_int("model.heads", 4, "attention heads H per block", 1, 1024);
  s.add_int("model.channels", 64, "width C = H d_h", 1, 1 << 16);
  s.add_choice("model.mlp", "gelu", {"gelu", "prelu"}, "MLP activation: GELU (tanh form) or PReLU with learnable slopes");
  s.add_real("model.init_std", 0.02, "standard deviation of the initial weights (GPT-2's)", 0.0);
  s.add_real("model.prelu_mean", 0.2, "prelu: mean of the initial slopes", -1e6, 1e6);
  s.add_real("model.prelu_std", 1.0, "prelu: standard deviation of the initial slopes (the authors' code: 1)", 0.0);
  optimizers().add_keys(s);  // each optimizer's own section: ecd.*, ecdsep.*, sgdm.*, adamw.*
  const char* kinds[3][5] = {{"query", "0.5", "0.05..0.15", "b_Q", "queries"},
                             {"key", "0.3", "0.12..0.08", "b_K", "keys"},
                             {"value", "0.5", "0.05", "b_V", "values"}};
  for (const auto& k : kinds) {
    const std::string kind = k[0], name = k[3];
    s.add_bool("bias." + kind, false, name + ": add a symmetry-breaking bias to every head's " + k[4]);
    s.add_text("bias." + kind + "_mu", k[1], name + ": mean (1 or d_h values, or a..b spaced evenly)");
    s.add_text("bias." + kind + "_sigma", k[2], name + ": standard deviation (1 or d_h values, or a..b)");
  }
  s.add_choice("bias.sampling", "resample", {"resample", "mean"},
               "resample: a fresh draw per layer and step; mean: b = mu at every pass (rotations fixing mu stay symmetries)");
  return s;
}

TrainParams train_params(const Deck& deck) {
  TrainParams p;
  p.data = deck.get_text("train.data");
  p.text_file = deck.get_text("train.text_file");
  p.tokenizer = deck.get_text("train.tokenizer");
  p.vocabulary_max = deck.get_int("train.vocabulary_max");
  if (p.data == "text" && p.text_file.empty()) throw InputError("train.data = text needs train.text_file");
  p.validation = deck.get_real("train.validation");
  p.chain.pi = parse_real_list("train.markov_pi", deck.get_text("train.markov_pi"));
  p.chain.d = static_cast<int>(p.chain.pi.size());
  p.chain.lam = deck.get_real("train.markov_lambda");
  if (p.data == "markov") check_chain(p.chain, "train.markov_pi", "train.markov_lambda");
  p.markov_tokens = deck.get_int("train.markov_tokens");
  p.steps = deck.get_int("train.steps");
  p.batch = deck.get_int("train.batch");
  p.eval_every = deck.get_int("train.eval_every");
  p.eval_sequences = deck.get_int("train.eval_sequences");
  if (p.steps % p.eval_every != 0)
    throw InputError("train.steps = " + std::to_string(p.steps) + " must be a multiple of train.eval_every = " +
                     std::to_string(p.eval_every));
  p.ema = deck.get_real("train.ema");
  p.eval_last = deck.get_text("train.eval_biases") == "last";
  p.optimizer = optimizers().make(deck.get_text("train.optimizer"), deck);
  p.single = deck.get_text("train.precision") == "float";
  p.alignment_null = static_cast<int>(deck.get_int("train.alignment_null"));
  p.alignment_top = static_cast<int>(deck.get_int("train.alignment_top"));
  p.parameters_every = deck.get_int("train.parameters_every");
  p.alignment_layer_inputs = deck.get_text("train.alignment_inputs") == "layer";
  p.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  if (deck.get_bool("train.export")) p.export_file = beside_output(deck.get_text("run.output"), ".safetensors");
  p.init_file = deck.get_text("model.init_file");
  GptConfig& m = p.model;
  m.context = static_cast<int>(deck.get_int("train.context"));
  m.layers = static_cast<int>(deck.get_int("model.layers"));
  m.heads = static_cast<int>(deck.get_int("model.heads"));
  m.channels = static_cast<int>(deck.get_int("model.channels"));
  m.prelu = deck.get_text("model.mlp") == "prelu";
  if (m.channels % m.heads != 0)
    throw InputError("model.channels = " + std::to_string(m.channels) + " must be a multiple of model.heads = " +
                     std::to_string(m.heads));
  p.init.std = deck.get_real("model.init_std");
  p.init.prelu_mean = deck.get_real("model.prelu_mean");
  p.init.prelu_std = deck.get_real("model.prelu_std");
  p.optimizer_context.seed = p.seed;  // its blocks once the vocabulary is known
  // The biases (d_h is known from the model).
  const int dh = m.channels / m.heads;
  BiasLaw* laws[3] = {&p.biases.query, &p.biases.key, &p.biases.value};
  const char* kinds[3] = {"query", "key", "value"};
  for (int i = 0; i < 3; ++i) {
    const std::string k = std::string("bias.") + kinds[i];
    laws[i]->on = deck.get_bool(k);
    laws[i]->mu = parse_head_vector(k + "_mu", deck.get_text(k + "_mu"), dh);
    laws[i]->sigma = parse_head_vector(k + "_sigma", deck.get_text(k + "_sigma"), dh);
    for (double v : laws[i]->sigma)
      if (v < 0) throw InputError("deck key '" + k + "_sigma': a negative standard deviation");
  }
  p.fixed_biases = deck.get_text("bias.sampling") == "mean";
  // The alignment is measured against bias.query_mu whether or not b_Q is on (a run without it is the control).
  p.alignment_direction = p.biases.query.mu;
  double norm = 0;
  for (double v : p.alignment_direction) norm += v * v;
  if (!(norm > 0)) p.alignment_direction.clear();
  return p;
}

TrainStudy::TrainStudy(const Comm& comm, const Deck& deck) : comm_(comm), params_(train_params(deck)) {
  if (params_.data == "text") {
    text_ = tokenize_text(comm, params_.text_file, params_.tokenizer == "bytes", "train.text_file",
                          memory_per_rank(comm, max_memory_from_deck(deck)));
    if (params_.tokenizer == "words") to_words(text_, params_.vocabulary_max, "train.text_file");
  } else {
    // One sample path of the chain (x_1 ~ pi), from the seed.
    text_.tokens = sample_sequence(params_.chain, params_.markov_tokens - 1, params_.seed, 0);
    for (int t = 0; t < params_.chain.d; ++t) text_.vocabulary.push_back(std::to_string(t));
  }
  params_.model.vocab = static_cast<int>(text_.vocabulary.size());
  split_ = split_text(text_, params_.validation, params_.model.context);
  std::vector<int>().swap(text_.tokens);  // the split holds them now
  params_.optimizer_context.blocks = GptLayout(params_.model).blocks();
}

TrainStudy::~TrainStudy() = default;

MemoryEstimate TrainStudy::memory() const {
  const double D = static_cast<double>(GptLayout(params_.model).size), bytes = params_.single ? 4 : 8;
  // The optimizer's vectors of state per parameter, as it declares them (one made for two parameters asked).
  const double state = static_cast<double>(params_.optimizer->make<double>({}, 2)->state_per_parameter());
  const GptConfig& m = params_.model;
  const double n = m.context, C = m.channels;
  MemoryEstimate memory;
  memory.add("parameters, gradient and optimizer state [D] x " + std::to_string(2 + static_cast<int>(state)),
             (2 + state) * D, bytes);
  memory.add("the record's start (parameters and optimizer state, for a signal inside a record) [D] x " +
                 std::to_string(1 + static_cast<int>(state)),
             (1 + state) * D, bytes);
  // The activations of one pass of the model: a rank's share of the batch (or of the validation sequences),
  // at most Gpt::sequences_per_pass; per sequence and layer 20 n C values and the H n^2 attention weights, then
  // the logits and about 18 n C of the final LayerNorm and the backward pass's buffers, in the parameters' scalar.
  const std::int64_t ranks = comm_.size();
  const std::int64_t share = (std::max(params_.batch, params_.eval_sequences) + ranks - 1) / ranks;
  const double sequences =
      static_cast<double>(std::min<std::int64_t>(share, Gpt<double>(m).sequences_per_pass(m.context)));
  memory.add("activations of one pass (" + std::to_string(static_cast<long long>(sequences)) + " sequences)",
             sequences * (m.layers * (20 * n * C + m.heads * n * n) + 18 * n * C + n * m.vocab), bytes);
  memory.add("the tokens", static_cast<double>(split_.train.size() + split_.validation.size()), 4);
  return memory;
}

RunState& TrainStudy::setup() {
  state_ = make_train_run(comm_, params_, split_, text_.vocabulary);
  return *state_;
}

std::string TrainStudy::banner() const {
  const GptConfig& m = params_.model;
  std::string bias;
  const std::pair<const char*, const BiasLaw*> laws[] = {
      {"b_Q", &params_.biases.query}, {"b_K", &params_.biases.key}, {"b_V", &params_.biases.value}};
  for (const auto& [name, law] : laws)
    if (law->on) bias += std::string(bias.empty() ? "" : " + ") + name;
  const std::string data =
      params_.data == "text" ? "text '" + params_.text_file + "'" : "a Markov chain's path";
  const std::string symmetry =
      bias.empty() ? "symmetric (no biases)" : bias + (params_.fixed_biases ? " fixed at the means" : " resampled");
  char line[640];
  std::snprintf(line, sizeof line,
                "tokdyn train: %s (%zu train / %zu validation tokens, vocabulary %d), GPT L = %d, H = %d, C = %d, %s, "
                "context %d; %s %s; %s; %lld steps of %lld sequences, %s",
                data.c_str(), split_.train.size(), split_.validation.size(), m.vocab, m.layers, m.heads, m.channels,
                m.prelu ? "PReLU" : "GELU", m.context, params_.optimizer->name.c_str(), params_.optimizer->summary.c_str(),
                symmetry.c_str(),
                static_cast<long long>(params_.steps), static_cast<long long>(params_.batch),
                params_.single ? "float" : "double");
  return line;
}

}  // namespace tokdyn
