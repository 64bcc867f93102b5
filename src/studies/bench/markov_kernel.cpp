// bench markov: the loss and gradient of tokdyn markov's one-layer model at fixed weights on every window of
// a text (postprocess/bench_markov.py rebuilds the same windows and weights in NumPy and PyTorch and
// compares): sequence-positions/s.
#include <cmath>
#include <cstdio>

#include "kernel.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/markov/one_layer.hpp"
#include "tokdyn/markov/sequences.hpp"

namespace tokdyn {
namespace {

class MarkovBench : public BenchKernel {
 public:
  explicit MarkovBench(BenchInput& in) : BenchKernel(in) {
    const std::string path = in.deck.get_text("bench.text_file");
    if (path.empty()) throw InputError("bench.kernel = markov needs bench.text_file");
    const TokenizedText text = tokenize_text(in.comm, path, false, "bench.text_file");
    const std::int64_t s = in.deck.get_int("bench.s"), windows = text_windows(text, s, 1);
    if (windows == 0) throw InputError("bench.text_file '" + path + "' is shorter than bench.s + 1 characters");
    items_ = text_items(text, s, 1, Partition(windows, in.comm.size()), in.comm.rank());
    shape_.d = static_cast<int>(text.vocabulary.size());
    shape_.m = shape_.mk = static_cast<int>(in.deck.get_int("bench.m"));
    // theta_k = sin(k + 1) / sqrt(m): O(1) logits, reproducible by a one-line formula anywhere.
    theta_.resize(shape_.size());
    grad_.resize(theta_.size());
    for (std::size_t k = 0; k < theta_.size(); ++k) theta_[k] = std::sin(static_cast<double>(k + 1)) / std::sqrt(shape_.m);
    work = static_cast<double>(windows) * static_cast<double>(s);
    unit = "sequence-positions";
  }
  void once() override { evaluate_one_layer(shape_, theta_.data(), items_, grad_.data(), in_.comm.get()); }

  // The loss and |grad| the references compare with, in place of the tokens' line.
  std::vector<std::string> banner() const override {
    std::vector<double> grad(theta_.size());
    const OneLayerEvaluation e = evaluate_one_layer(shape_, theta_.data(), items_, grad.data(), in_.comm.get());
    double norm = 0;
    for (double g : grad) norm += g * g;
    char line[320];
    std::snprintf(line, sizeof line,
                  "bench markov: %lld windows of s = %lld, vocabulary d = %d, m = mk = %d, %d rank%s: loss %.15e, "
                  "|grad| %.15e",
                  static_cast<long long>(items_.n_global), static_cast<long long>(items_.s), shape_.d, shape_.m,
                  in_.comm.size(), in_.comm.size() == 1 ? "" : "s", e.loss, std::sqrt(norm));
    return {line};
  }
  std::vector<std::string> report(double best) const override {
    char line[96];
    std::snprintf(line, sizeof line, "  = %.4g sequences/s (forward and backward)",
                  static_cast<double>(items_.n_global) / best);
    return {line};
  }
  std::string memory() const override {
    char line[96];
    std::snprintf(line, sizeof line, "(items: %.1f MiB per rank)",
                  static_cast<double>(items_.size()) * (2 * shape_.d + 2) * 8 / 1048576.0);
    return line;
  }

 protected:
  std::string what() const override { return "markov"; }

 private:
  OneLayerShape shape_;
  SequenceItems items_;
  std::vector<double> theta_, grad_;
};

}  // namespace

std::unique_ptr<BenchKernel> make_markov_kernel(BenchInput& in) { return std::make_unique<MarkovBench>(in); }

}  // namespace tokdyn
