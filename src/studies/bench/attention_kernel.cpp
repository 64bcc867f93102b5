// bench attention: one pass of an attention style (identity Q, K, V at bench.beta) over N random tokens;
// pairs/s for the ring styles, points/s for the fast ones; then the output's error against the exact sums
// on bench.check_rows rows and the fraction of the machine's DGEMM rate.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernel.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/feature_attention.hpp"
#include "tokdyn/attention/harmonic_attention.hpp"
#include "tokdyn/attention/ring_attention.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {
namespace {

// The error of an exponential style's output (identity Q, K, V, logits beta <x_i, x_j>, uniform masses) against
// the exact sums on `rows` rows spread over the global index: the rows' tokens and outputs go to every rank, each
// rank sums over its own keys (shifted by e^{-|beta|}: the tokens are unit vectors), one MPI_Allreduce.
// Returns {max_k |out_k - exact_k|, max_k |exact_k|} (max norms).
std::pair<double, double> error_against_exact(const Comm& comm, const Partition& partition, int d, double beta,
                                              bool normalized, std::int64_t rows, const double* x, const double* out) {
  const std::int64_t n = partition.n_global, begin = partition.begin(comm.rank()),
                     n_local = partition.count(comm.rank());
  rows = std::min(rows, n);
  std::vector<double> picked(static_cast<std::size_t>(rows) * 2 * d, 0.0), all(picked.size());  // [rows, x | out]
  for (std::int64_t k = 0; k < rows; ++k) {
    const std::int64_t g = k * n / rows;
    if (g < begin || g >= begin + n_local) continue;
    std::copy(x + (g - begin) * d, x + (g - begin + 1) * d, picked.begin() + k * 2 * d);
    std::copy(out + (g - begin) * d, out + (g - begin + 1) * d, picked.begin() + k * 2 * d + d);
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(picked.data(), all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_SUM,
                                 comm.get()));
  std::vector<double> sums(static_cast<std::size_t>(rows) * (d + 1), 0.0), global(sums.size());  // [rows, Z | U]
  for (std::int64_t k = 0; k < rows; ++k) {
    const double* q = all.data() + k * 2 * d;
    double* s = sums.data() + k * (d + 1);
    for (std::int64_t j = 0; j < n_local; ++j) {
      const double* y = x + j * d;
      double dot = 0;
      for (int a = 0; a < d; ++a) dot += q[a] * y[a];
      const double e = std::exp(beta * dot - std::abs(beta)) / static_cast<double>(n);
      s[0] += e;
      for (int a = 0; a < d; ++a) s[1 + a] += e * y[a];
    }
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(sums.data(), global.data(), static_cast<int>(global.size()), MPI_DOUBLE, MPI_SUM,
                                 comm.get()));
  double error = 0, size = 0;
  for (std::int64_t k = 0; k < rows; ++k) {
    const double* s = global.data() + k * (d + 1);
    const double* o = all.data() + k * 2 * d + d;
    for (int a = 0; a < d; ++a) {
      const double exact = normalized ? s[1 + a] / s[0] : std::exp(std::abs(beta)) * s[1 + a];
      error = std::max(error, std::abs(o[a] - exact));
      size = std::max(size, std::abs(exact));
    }
  }
  return {error, size};
}

class AttentionBench : public BenchKernel {
 public:
  explicit AttentionBench(BenchInput& in)
      : BenchKernel(in), style_(in.deck.get_text("bench.style")), beta_(in.deck.get_real("bench.beta")) {
    AttentionContext c;
    c.comm = in.comm.get();
    c.partition = in.partition;
    c.tile = in.tile;
    c.symmetric = in.deck.get_bool("bench.symmetric");
    c.weights = identity_attention_weights(in.d, beta_);
    c.tolerance = in.deck.get_real("bench.tolerance");
    c.features = static_cast<int>(in.deck.get_int("bench.features"));
    c.single_tiles = in.deck.get_text("bench.precision") == "float32";
    attention_ = attention_styles().make(style_, c);
    // The ring styles visit N^2 pairs; the fast styles touch each point O(p), O(p^2) or O(M) times, so
    // points/s is their comparable rate (an exact style's points/s is its pairs/s divided by N).
    const double n = static_cast<double>(in.partition.n_global);
    ring_ = dynamic_cast<RingAttention*>(attention_.get());
    work = ring_ ? n * n : n;
    unit = ring_ ? "pairs" : "points";
  }
  void once() override { attention_->apply(in_.x.data(), in_.out.data()); }

  std::vector<std::string> banner() const override {
    std::vector<std::string> lines = BenchKernel::banner();
    if (style_.rfind("fourier", 0) == 0) lines.push_back(fourier_truncation(beta_));
    if (auto* harmonic = dynamic_cast<HarmonicAttention*>(attention_.get())) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "  beta = %g: spherical-harmonic truncation p = %d ((p + 1)^2 = %d harmonics), tolerance %.1e",
                    beta_, harmonic->degree(), (harmonic->degree() + 1) * (harmonic->degree() + 1),
                    in_.deck.get_real("bench.tolerance"));
      lines.push_back(line);
    }
    return lines;
  }

  std::vector<std::string> report(double best) const override {
    std::vector<std::string> lines;
    char line[320];
    const std::int64_t n = in_.partition.n_global;
    if (ring_) {
      std::snprintf(line, sizeof line, "  = %.4g points/s (N points per pass)", static_cast<double>(n) / best);
      lines.push_back(line);
    }
    const AttentionTraits traits = attention_styles().traits(style_);
    if (traits.exponential && in_.deck.get_int("bench.check_rows") > 0) {
      const std::int64_t rows = std::min<std::int64_t>(in_.deck.get_int("bench.check_rows"), n);
      const auto [error, size] = error_against_exact(in_.comm, in_.partition, in_.d, beta_, traits.normalized, rows,
                                                     in_.x.data(), in_.out.data());
      std::snprintf(line, sizeof line,
                    "  error against the exact sums on %lld rows: max |out - exact| = %.2e, / max |exact| = %.2e",
                    static_cast<long long>(rows), error, size > 0 ? error / size : error);
      lines.push_back(line);
      if (auto* features = dynamic_cast<FeatureAttention*>(attention_.get())) {
        std::snprintf(line, sizeof line,
                      "  random features: M = %lld, estimated standard error of Z_i relative to Z_i (rms over tokens) = "
                      "%.2e", static_cast<long long>(in_.deck.get_int("bench.features")), features->relative_stderr());
        lines.push_back(line);
      }
    }
    if (ring_) {
      // The flops of the tiles' matrix products per ordered pair: general ring, logits 2d and value sums 2d;
      // half ring, per unordered pair a Gram entry 2d and two value sums 2(d + 1), halved.
      const bool half = ring_->took_symmetric(), single = in_.deck.get_text("bench.precision") == "float32";
      const int d = in_.d;
      lines.push_back(fraction_of_peak(in_.comm, work / best, half ? d + 2.0 * (d + 1) : 4.0 * d,
                                       half ? (single ? "half ring, float32 tiles" : "half ring")
                                            : (single ? "general ring, float32 tiles" : "general ring"),
                                       single));
    }
    return lines;
  }

 protected:
  std::string what() const override { return "attention " + style_; }

 private:
  std::string style_;
  double beta_;
  std::unique_ptr<Attention> attention_;
  RingAttention* ring_ = nullptr;
};

}  // namespace

std::unique_ptr<BenchKernel> make_attention_kernel(BenchInput& in) { return std::make_unique<AttentionBench>(in); }

}  // namespace tokdyn
