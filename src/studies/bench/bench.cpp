// tokdyn bench: the throughput of one hot kernel (kernels.cpp lists them: attention styles, pair statistics, the
// circle's fast sums, the random MLP on random tokens, the forward and backward pass of tokdyn markov's
// one-layer model on the windows of a text, the token snapshot's write), timed repeat by repeat, with the
// peak memory per rank. Not a run: it writes no file (doc/performance.md quotes its lines).
#include "tokdyn/studies/bench.hpp"

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#include "kernel.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

DeckSchema bench_schema() {
  DeckSchema s;
  std::string kernels = "kernel:";
  for (const std::string& k : bench_kernels().names())
    kernels += std::string(kernels.back() == ':' ? " " : ", ") + k + " (" + bench_kernels().help(k) + ")";
  s.add_choice("bench.kernel", "attention", bench_kernels().names(), kernels);
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
               "attention: the exact styles' tile products (attention.precision)");
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

void run_bench(const Comm& comm, const Deck& deck) {
  set_blas_threads(static_cast<int>(deck.get_int("bench.blas_threads")));
  BenchInput in{comm, deck, Partition(deck.get_int("bench.N"), comm.size()), static_cast<int>(deck.get_int("bench.d")),
                static_cast<int>(deck.get_int("bench.tile")), {}, {}};
  const std::int64_t n_local = in.partition.count(comm.rank());
  in.x.resize(static_cast<std::size_t>(n_local) * in.d);
  in.out.resize(in.x.size());
  sample_uniform_sphere(1, in.partition.begin(comm.rank()), n_local, in.d, in.x.data());
  const std::unique_ptr<BenchKernel> kernel = bench_kernels().make(deck.get_text("bench.kernel"), in);
  for (const std::string& line : kernel->banner()) comm.print(line);

  for (std::int64_t w = 0; w < deck.get_int("bench.warmup"); ++w) kernel->once();
  const int repeats = static_cast<int>(deck.get_int("bench.repeats"));
  const double work = kernel->work;
  const char* unit = kernel->unit.c_str();
  char line[256];
  double best = 1e300, total = 0;
  for (int r = 0; r < repeats; ++r) {
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    const double t0 = MPI_Wtime();
    kernel->once();
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    const double t = MPI_Wtime() - t0;
    best = std::min(best, t);
    total += t;
    std::snprintf(line, sizeof line, "  repeat %d: %.4f s  %.4g %s/s", r + 1, t, work / t, unit);
    comm.print(line);
  }
  std::snprintf(line, sizeof line, "best %.4f s  %.4g %s/s  (mean %.4g %s/s)", best, work / best, unit,
                work * repeats / total, unit);
  comm.print(line);
  for (const std::string& l : kernel->report(best)) comm.print(l);

  // Peak resident memory of the largest rank: O((N/P) d) plus tiles, never N x N.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  double mib = usage.ru_maxrss / 1024.0, max_mib = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&mib, &max_mib, 1, MPI_DOUBLE, MPI_MAX, comm.get()));
  std::snprintf(line, sizeof line, "peak memory per rank %.1f MiB ", max_mib);
  comm.print(line + kernel->memory());
}

}  // namespace tokdyn
