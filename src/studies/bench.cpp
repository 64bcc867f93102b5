// tokdyn bench: the throughput of one hot kernel (attention styles, pair statistics, the circle's
// fast sums, the random MLP on random tokens; the forward and backward pass of tokdyn markov's one-layer
// model on the windows of a text), timed repeat by repeat, with the peak memory per rank. Not
// a run: it writes no file (doc/performance.md quotes its lines).
#include "tokdyn/studies/bench.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/feature_attention.hpp"
#include "tokdyn/attention/fourier_attention.hpp"
#include "tokdyn/attention/harmonic_attention.hpp"
#include "tokdyn/attention/ring_attention.hpp"
#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/io/checkpoint.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/markov/one_layer.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

DeckSchema bench_schema() {
  DeckSchema s;
  s.add_choice("bench.kernel", "attention", {"attention", "statistics", "circle", "mlp", "markov", "snapshot"},
               "kernel: attention (N^2 pairs, or N points for the fourier styles), statistics (N(N-1)/2 "
               "pairs), circle (E_beta and mean on S^1 in O(N p), d = 2, N points), mlp (tokens x width), "
               "markov (loss and gradient of the one-layer model on the windows of bench.text_file: sequences x "
               "positions), snapshot (one token snapshot [N, d] written collectively to an HDF5 file in bench.dir and "
               "synced to disk, beside the same bytes written by one process: bytes)");
  s.add_int("bench.N", 4096, "number of tokens", 1, std::int64_t(1) << 40);
  s.add_int("bench.d", 16, "dimension", 2, 1 << 20);
  s.add_int("bench.repeats", 3, "timed repetitions", 1);
  s.add_int("bench.warmup", 1, "untimed runs first (page faults, BLAS buffers)", 0);
  s.add_int("bench.tile", 256, "rows per BLAS tile", 1, 1 << 16);
  s.add_choice("bench.style", "softmax", attention_styles().names(),
               "attention style (kernel attention); fourier styles need bench.d = 2, harmonic bench.d = 3; the fast "
               "styles count points, not pairs");
  s.add_bool("bench.symmetric", true,
             "attention: the half ring when the logits allow (identity Q, K: they do); false: the general ring pass");
  s.add_real("bench.tolerance", 1e-12, "harmonic styles: the series' truncation tolerance (attention.tolerance)",
             1e-16, 0.5);
  s.add_choice("bench.precision", "float64", {"float64", "float32"},
               "attention: the exact styles' tile products (attention.precision; float32 takes the general ring)");
  s.add_int("bench.features", 1024, "random-features styles: the number of features (attention.features)", 2, 1 << 24);
  s.add_int("bench.check_rows", 64,
            "attention: rows compared with the exact sums (O(rows N d), after the timing); 0: no check", 0, 1 << 20);
  s.add_real("bench.beta", 1.0, "beta of the attention logits (identity Q, K, V) and of E_beta (kernel circle)");
  s.add_int("bench.width", 2048, "MLP width m (kernel mlp)", 1);
  s.add_choice("bench.activation", "relu", activation_names(), "MLP activation (kernel mlp)");
  s.add_int("bench.blas_threads", 1, "BLAS threads per rank", 1, 1024);
  s.add_file("bench.text_file", "", "markov: a UTF-8 text (tokens: its characters; d: their number)");
  s.add_int("bench.s", 32, "markov: window length s (stride 1)", 2, 1 << 20);
  s.add_text("bench.dir", ".", "snapshot: the directory of the scratch files (removed after each repeat)");
  s.add_int("bench.m", 16, "markov: embedding width m = m_k", 1, 1 << 16);
  return s;
}

namespace {

// DGEMM GFLOP/s of all ranks together: each rank multiplies 1024 x 1024 matrices (best of 3).
double dgemm_rate(const Comm& comm) {
  const int n = 1024;
  std::vector<double> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size(), 0.0);
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = std::sin(0.001 * k), b[k] = std::cos(0.002 * k);
  double best = 1e300;
  for (int r = 0; r < 3; ++r) {
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    const double t0 = MPI_Wtime();
    gemm_nn(n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    best = std::min(best, MPI_Wtime() - t0);
  }
  return comm.size() * 2.0 * n * n * n / best * 1e-9;
}

// The error of an exponential style's output (identity Q, K, V, logits beta <x_i, x_j>, uniform masses) against
// the exact sums on `rows` rows spread over the global index: the rows' tokens and outputs go to every rank, each
// rank sums over its own keys (shifted by e^{-|beta|}: the tokens are unit vectors), one MPI_Allreduce.
// Returns {max_k |out_k - exact_k|, max_k |exact_k|} (max norms).
std::pair<double, double> error_against_exact(const Comm& comm, const Partition& partition, int d, double beta, bool normalized,
                           std::int64_t rows, const double* x, const double* out) {
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

// Flush a closed file's pages to the disk: on one node fdatasync through any descriptor writes the pages
// that every rank's MPI-IO left in the page cache.
void sync_file(const Comm& comm, const std::string& path) {
  TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
  if (comm.rank() == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0 || ::fdatasync(fd) != 0) throw SystemError("bench: cannot sync '" + path + "': " + std::strerror(errno));
    ::close(fd);
  }
}

// The token snapshot of a run (RunFile::write_snapshot's dataset and call): a series [1, N, d] written
// collectively, the file closed and synced (fdatasync) so the time is the disk's, then removed.
void write_snapshot_file(const Comm& comm, const std::string& path, const Partition& partition, int d,
                         const double* x) {
  {
    h5::Handle file = h5::create_file(path, comm.get());
    h5::Handle series = h5::create_series(file, "X", H5T_IEEE_F64LE,
                                          {static_cast<hsize_t>(partition.n_global), static_cast<hsize_t>(d)});
    h5::write_series_row(series, 0, H5T_NATIVE_DOUBLE, x, partition.begin(comm.rank()), partition.count(comm.rank()));
  }
  sync_file(comm, path);
  TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
  if (comm.rank() == 0) std::remove(path.c_str());
}

// What the disk does without HDF5 or MPI-IO (dd bs=4M conv=fdatasync): rank 0 writes the same number of
// bytes in 4 MiB blocks and syncs; the other ranks wait.
void write_plain_file(const Comm& comm, const std::string& path, std::int64_t bytes) {
  if (comm.rank() == 0) {
    std::vector<char> block(std::size_t(4) << 20, 1);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw SystemError("bench: cannot create '" + path + "': " + std::strerror(errno));
    for (std::int64_t done = 0; done < bytes;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(block.size(), bytes - done));
      const ssize_t w = ::write(fd, block.data(), n);
      if (w <= 0) {
        ::close(fd);
        throw SystemError("bench: cannot write '" + path + "': " + std::strerror(errno));
      }
      done += w;
    }
    if (::fdatasync(fd) != 0) {
      ::close(fd);
      throw SystemError("bench: cannot sync '" + path + "': " + std::strerror(errno));
    }
    ::close(fd);
    std::remove(path.c_str());
  }
  TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
}

}  // namespace

void run_bench(const Comm& comm, const Deck& deck) {
  set_blas_threads(static_cast<int>(deck.get_int("bench.blas_threads")));
  const std::string kernel = deck.get_text("bench.kernel");
  const std::int64_t n = deck.get_int("bench.N");
  const int d = static_cast<int>(deck.get_int("bench.d")), tile = static_cast<int>(deck.get_int("bench.tile"));
  const int repeats = static_cast<int>(deck.get_int("bench.repeats"));
  const Partition partition(n, comm.size());
  const std::int64_t n_local = partition.count(comm.rank());
  std::vector<double> x(static_cast<std::size_t>(n_local) * d), out(x.size());
  sample_uniform_sphere(1, partition.begin(comm.rank()), n_local, d, x.data());

  std::function<void()> once;
  double work = 0;
  std::string unit = "pairs";
  std::unique_ptr<Attention> attention;
  std::unique_ptr<PairStatisticsPass> stats;
  std::unique_ptr<RandomMlp> mlp;
  OneLayerShape shape;
  SequenceItems items;
  std::vector<double> theta, grad;
  if (kernel == "markov") {
    // The model's loss and gradient at fixed weights on every window of the text: the reference
    // implementations (postprocess/bench_markov.py) rebuild the same windows and weights and compare.
    const std::string path = deck.get_text("bench.text_file");
    if (path.empty()) throw InputError("bench.kernel = markov needs bench.text_file");
    const TokenizedText text = tokenize_text(comm, path, false, "bench.text_file");
    const std::int64_t s = deck.get_int("bench.s"), windows = text_windows(text, s, 1);
    if (windows == 0) throw InputError("bench.text_file '" + path + "' is shorter than bench.s + 1 characters");
    items = text_items(text, s, 1, Partition(windows, comm.size()), comm.rank());
    shape.d = static_cast<int>(text.vocabulary.size());
    shape.m = shape.mk = static_cast<int>(deck.get_int("bench.m"));
    // theta_k = sin(k + 1) / sqrt(m): O(1) logits, reproducible by a one-line formula anywhere.
    theta.resize(shape.size());
    grad.resize(theta.size());
    for (std::size_t k = 0; k < theta.size(); ++k) theta[k] = std::sin(static_cast<double>(k + 1)) / std::sqrt(shape.m);
    once = [&] { evaluate_one_layer(shape, theta.data(), items, grad.data(), comm.get()); };
    work = static_cast<double>(windows) * static_cast<double>(s);
    unit = "sequence-positions";
  } else if (kernel == "attention") {
    AttentionContext c;
    c.comm = comm.get();
    c.partition = partition;
    c.tile = tile;
    c.symmetric = deck.get_bool("bench.symmetric");
    c.weights = identity_attention_weights(d, deck.get_real("bench.beta"));
    c.tolerance = deck.get_real("bench.tolerance");
    c.features = static_cast<int>(deck.get_int("bench.features"));
    c.single_tiles = deck.get_text("bench.precision") == "float32";
    const std::string style = deck.get_text("bench.style");
    attention = attention_styles().make(style, c);
    once = [&] { attention->apply(x.data(), out.data()); };
    // The ring styles visit N^2 pairs; the fast styles touch each point O(p), O(p^2) or O(M) times, so
    // points/s is their comparable rate (an exact style's points/s is its pairs/s divided by N).
    const bool per_point = dynamic_cast<RingAttention*>(attention.get()) == nullptr;
    work = per_point ? static_cast<double>(n) : static_cast<double>(n) * n;
    unit = per_point ? "points" : "pairs";
  } else if (kernel == "snapshot") {
    const std::string dir = deck.get_text("bench.dir");
    once = [&, dir] { write_snapshot_file(comm, dir + "/bench-snapshot.h5.tmp", partition, d, x.data()); };
    work = static_cast<double>(n) * d * 8;
    unit = "bytes";
  } else if (kernel == "statistics") {
    stats = std::make_unique<PairStatisticsPass>(comm.get(), partition, d, 1.0, 50, tile);
    once = [&] { stats->compute(x.data()); };
    work = static_cast<double>(n) * (n - 1) / 2;
  } else if (kernel == "circle") {
    if (d != 2) throw InputError("bench.kernel = circle needs bench.d = 2");
    const double beta = deck.get_real("bench.beta");
    once = [&, beta] { circle_statistics(comm.get(), n_local, x.data(), nullptr, beta); };
    work = static_cast<double>(n);
    unit = "points";
  } else {
    MlpParams p;
    p.width = deck.get_int("bench.width");
    p.activation = deck.get_text("bench.activation");
    mlp = std::make_unique<RandomMlp>(p, d);
    once = [&] {
      mlp->draw(1);
      mlp->apply(x.data(), n_local, out.data());
    };
    work = static_cast<double>(n) * p.width;
    unit = "token-neurons";
  }
  char line[256];
  const std::string what = kernel == "attention" ? kernel + " " + deck.get_text("bench.style") : kernel;
  if (kernel != "markov") {
    std::snprintf(line, sizeof line, "bench %s: N = %lld, d = %d, tile = %d, %d rank%s", what.c_str(),
                  static_cast<long long>(n), d, tile, comm.size(), comm.size() == 1 ? "" : "s");
    comm.print(line);
  } else {
    const OneLayerEvaluation e = evaluate_one_layer(shape, theta.data(), items, grad.data(), comm.get());
    double norm = 0;
    for (double g : grad) norm += g * g;
    std::snprintf(line, sizeof line,
                  "bench markov: %lld windows of s = %lld, vocabulary d = %d, m = mk = %d, %d rank%s: loss %.15e, "
                  "|grad| %.15e",
                  static_cast<long long>(items.n_global), static_cast<long long>(items.s), shape.d, shape.m, comm.size(),
                  comm.size() == 1 ? "" : "s", e.loss, std::sqrt(norm));
    comm.print(line);
  }
  if (kernel == "circle" || deck.get_text("bench.style").rfind("fourier", 0) == 0) {
    std::snprintf(line, sizeof line, "  beta = %g: Fourier truncation p = %zu", deck.get_real("bench.beta"),
                  scaled_bessel_series(deck.get_real("bench.beta")).size() - 1);
    comm.print(line);
  }
  if (auto* harmonic = dynamic_cast<HarmonicAttention*>(attention.get())) {
    std::snprintf(line, sizeof line, "  beta = %g: spherical-harmonic truncation p = %d ((p + 1)^2 = %d harmonics), "
                  "tolerance %.1e", deck.get_real("bench.beta"), harmonic->degree(),
                  (harmonic->degree() + 1) * (harmonic->degree() + 1), deck.get_real("bench.tolerance"));
    comm.print(line);
  }
  for (std::int64_t w = 0; w < deck.get_int("bench.warmup"); ++w) once();
  double best = 1e300, total = 0;
  for (int r = 0; r < repeats; ++r) {
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    const double t0 = MPI_Wtime();
    once();
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    const double t = MPI_Wtime() - t0;
    best = std::min(best, t);
    total += t;
    std::snprintf(line, sizeof line, "  repeat %d: %.4f s  %.4g %s/s", r + 1, t, work / t, unit.c_str());
    comm.print(line);
  }
  std::snprintf(line, sizeof line, "best %.4f s  %.4g %s/s  (mean %.4g %s/s)", best, work / best, unit.c_str(),
                work * repeats / total, unit.c_str());
  comm.print(line);
  if (kernel == "snapshot") {
    // The disk's own rate for the same bytes, best of the same repeats, in the same run.
    const std::string path = deck.get_text("bench.dir") + "/bench-plain.tmp";
    double plain = 1e300;
    for (int r = 0; r < repeats; ++r) {
      TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
      const double t0 = MPI_Wtime();
      write_plain_file(comm, path, static_cast<std::int64_t>(work));
      plain = std::min(plain, MPI_Wtime() - t0);
    }
    std::snprintf(line, sizeof line,
                  "  = %.3g GB/s; the same %.3g GB written by one process in 4 MiB blocks and synced (dd bs=4M "
                  "conv=fdatasync): %.4f s, %.3g GB/s; HDF5 snapshot / plain = %.2f",
                  work / best * 1e-9, work * 1e-9, plain, work / plain * 1e-9, plain / best);
    comm.print(line);
  }
  if (kernel == "markov") {
    std::snprintf(line, sizeof line, "  = %.4g sequences/s (forward and backward)",
                  static_cast<double>(items.n_global) / best);
    comm.print(line);
  }
  if (unit == "pairs" && kernel == "attention") {
    std::snprintf(line, sizeof line, "  = %.4g points/s (N points per pass)", static_cast<double>(n) / best);
    comm.print(line);
  }
  if (kernel == "attention" && attention_styles().traits(deck.get_text("bench.style")).exponential &&
      deck.get_int("bench.check_rows") > 0) {
    const std::int64_t rows = std::min<std::int64_t>(deck.get_int("bench.check_rows"), n);
    const auto [error, size] = error_against_exact(comm, partition, d, deck.get_real("bench.beta"),
                                                   attention_styles().traits(deck.get_text("bench.style")).normalized,
                                                   rows, x.data(), out.data());
    std::snprintf(line, sizeof line,
                  "  error against the exact sums on %lld rows: max |out - exact| = %.2e, / max |exact| = %.2e",
                  static_cast<long long>(rows), error, size > 0 ? error / size : error);
    comm.print(line);
    if (auto* features = dynamic_cast<FeatureAttention*>(attention.get())) {
      std::snprintf(line, sizeof line,
                    "  random features: M = %lld, estimated standard error of Z_i relative to Z_i (rms over tokens) = "
                    "%.2e", static_cast<long long>(deck.get_int("bench.features")), features->relative_stderr());
      comm.print(line);
    }
  }
  if (unit == "pairs") {
    // Fraction of peak: the flops of the tiles' matrix products per ordered pair (general ring: logits 2d and
    // value sums 2d; half ring: per unordered pair a Gram entry 2d and two value sums 2(d + 1), halved;
    // statistics: a Gram entry 2d per unordered pair) against this machine's DGEMM rate on the same ranks.
    auto* ring = dynamic_cast<RingAttention*>(attention.get());
    const bool half = ring && ring->took_symmetric(), single = deck.get_text("bench.precision") == "float32";
    const double flops_per_pair = kernel == "statistics" ? 2.0 * d : half ? d + 2.0 * (d + 1) : ring ? 4.0 * d : 0.0;
    if (flops_per_pair > 0) {
      const double rate = dgemm_rate(comm);
      std::snprintf(line, sizeof line,
                    "  = %.4g GFLOP/s in the tiles' products (%s, %g flops a pair) = %.0f %% of this machine's DGEMM "
                    "rate (%.4g GFLOP/s on %d rank%s, 1024^3 products)",
                    work / best * flops_per_pair * 1e-9,
                    kernel == "statistics" ? "Gram tiles"
                    : half ? (single ? "half ring, float32 tiles" : "half ring")
                           : (single ? "general ring, float32 tiles" : "general ring"),
                    flops_per_pair,
                    100 * work / best * flops_per_pair * 1e-9 / rate, rate, comm.size(), comm.size() == 1 ? "" : "s");
      comm.print(line);
    }
  }
  // Peak resident memory of the largest rank: O((N/P) d) plus tiles, never N x N.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  double mib = usage.ru_maxrss / 1024.0, max_mib = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&mib, &max_mib, 1, MPI_DOUBLE, MPI_MAX, comm.get()));
  if (kernel == "markov")
    std::snprintf(line, sizeof line, "peak memory per rank %.1f MiB (items: %.1f MiB per rank)", max_mib,
                  static_cast<double>(items.size()) * (2 * shape.d + 2) * 8 / 1048576.0);
  else
    std::snprintf(line, sizeof line, "peak memory per rank %.1f MiB (tokens: %.1f MiB per rank)", max_mib,
                  static_cast<double>(partition.max_count()) * d * 8 / 1048576.0);
  comm.print(line);
}

}  // namespace tokdyn
