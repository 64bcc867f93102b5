// The list of bench kernels: adding one is its class (a file with its factory) plus one line here; what the
// kernels share (the banner, the memory line, the fraction of the machine's FMA peak and GEMM rate).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernel.hpp"
#include "tokdyn/attention/bessel_series.hpp"
#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

const BenchKernels& bench_kernels() {
  static const BenchKernels r = [] {
    BenchKernels r("bench kernel");
    r.add("attention", "N^2 pairs, or N points for the fast-summation styles", make_attention_kernel);
    r.add("statistics", "N(N-1)/2 pairs", make_statistics_kernel);
    r.add("circle", "E_beta and mean on S^1 in O(N p), d = 2, N points", make_circle_kernel);
    r.add("mlp", "tokens x width", make_mlp_kernel);
    r.add("markov", "loss and gradient of the one-layer model on the windows of bench.text_file: sequences x positions",
          make_markov_kernel);
    r.add("snapshot",
          "one token snapshot [N, d] written collectively to an HDF5 file in bench.dir and synced to disk, beside the "
          "same bytes written by one process: bytes",
          make_snapshot_kernel);
    return r;
  }();
  return r;
}

std::vector<std::string> BenchKernel::banner() const {
  char line[256];
  std::snprintf(line, sizeof line, "bench %s: N = %lld, d = %d, tile = %d, %d rank%s", what().c_str(),
                static_cast<long long>(in_.partition.n_global), in_.d, in_.tile, in_.comm.size(),
                in_.comm.size() == 1 ? "" : "s");
  return {line};
}

std::string BenchKernel::memory() const {
  char line[96];
  std::snprintf(line, sizeof line, "(tokens: %.1f MiB per rank)",
                static_cast<double>(in_.partition.max_count()) * in_.d * 8 / 1048576.0);
  return line;
}

std::string fourier_truncation(double beta) {
  char line[96];
  std::snprintf(line, sizeof line, "  beta = %g: Fourier truncation p = %zu", beta, scaled_bessel_series(beta).size() - 1);
  return line;
}

namespace {

// DGEMM (SGEMM) GFLOP/s of all ranks together: each rank multiplies 1024 x 1024 matrices (best of 3).
template <class T>
double gemm_rate(const Comm& comm) {
  const int n = 1024;
  std::vector<T> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size(), T(0));
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = static_cast<T>(std::sin(0.001 * k)), b[k] = static_cast<T>(std::cos(0.002 * k));
  double best = 1e300;
  for (int r = 0; r < 3; ++r) {
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    const double t0 = MPI_Wtime();
    gemm_nn(n, n, n, T(1), a.data(), n, b.data(), n, T(0), c.data(), n);
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    best = std::min(best, MPI_Wtime() - t0);
  }
  return comm.size() * 2.0 * n * n * n / best * 1e-9;
}

// `rounds` rounds of 512 bytes of independent fused multiply-adds acc = acc a + b (eight AVX-512 registers, sixteen
// AVX2 ones: enough chains to cover the FMA units' latency times their number, few enough to stay in registers);
// returns a sum of the chains, so that none is dropped.
template <class T>
TOKDYN_VECTOR_CLONES T fma_chains(T a, T b, long rounds) {
  constexpr int kChains = 512 / sizeof(T);
  T acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = static_cast<T>(j) / kChains;
  for (long r = 0; r < rounds; ++r)
    for (int j = 0; j < kChains; ++j) acc[j] = std::fma(acc[j], a, b);
  T sum = 0;
  for (int j = 0; j < kChains; ++j) sum += acc[j];
  return sum;
}

// The FMA peak GFLOP/s of all ranks together, measured: every rank runs independent FMA chains at once (best of 3).
template <class T>
double fma_peak(const Comm& comm) {
  const long rounds = 200000;
  double best = 1e300, sink = 0;
  for (int r = 0; r < 3; ++r) {
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    const double t0 = MPI_Wtime();
    sink += fma_chains<T>(static_cast<T>(0.999999), static_cast<T>(1e-6), rounds);
    TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
    best = std::min(best, MPI_Wtime() - t0);
  }
  if (!std::isfinite(sink)) throw SystemError("bench: the FMA chains did not stay finite");
  return comm.size() * 2.0 * (512 / sizeof(T)) * rounds / best * 1e-9;
}

}  // namespace

std::string fraction_of_peak(const Comm& comm, double pairs_per_second, double flops_per_pair, const std::string& what,
                             bool float32) {
  const double gemm = float32 ? gemm_rate<float>(comm) : gemm_rate<double>(comm);
  const double peak = float32 ? fma_peak<float>(comm) : fma_peak<double>(comm);
  const double gflops = pairs_per_second * flops_per_pair * 1e-9;
  const char* p = float32 ? "float32" : "float64";
  char line[480];
  std::snprintf(line, sizeof line,
                "  = %.4g GFLOP/s in the tiles' products (%s, %g flops a pair) = %.0f %% of this machine's %s FMA "
                "peak (%.4g GFLOP/s measured on %d rank%s) and %.0f %% of its %s rate (%.4g GFLOP/s, 1024^3 products)",
                gflops, what.c_str(), flops_per_pair, 100 * gflops / peak, p, peak, comm.size(),
                comm.size() == 1 ? "" : "s", 100 * gflops / gemm, float32 ? "SGEMM" : "DGEMM", gemm);
  return line;
}

}  // namespace tokdyn
