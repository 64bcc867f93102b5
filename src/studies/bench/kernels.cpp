// The list of bench kernels: adding one is its class (a file with its factory) plus one line here; what the
// kernels share (the banner, the memory line, the fraction of the machine's DGEMM rate).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernel.hpp"
#include "tokdyn/attention/bessel_series.hpp"
#include "tokdyn/core/numerics/blas.hpp"
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

}  // namespace

std::string fraction_of_peak(const Comm& comm, double pairs_per_second, double flops_per_pair, const std::string& what) {
  const double rate = dgemm_rate(comm), gflops = pairs_per_second * flops_per_pair * 1e-9;
  char line[320];
  std::snprintf(line, sizeof line,
                "  = %.4g GFLOP/s in the tiles' products (%s, %g flops a pair) = %.0f %% of this machine's DGEMM "
                "rate (%.4g GFLOP/s on %d rank%s, 1024^3 products)",
                gflops, what.c_str(), flops_per_pair, 100 * gflops / rate, rate, comm.size(), comm.size() == 1 ? "" : "s");
  return line;
}

}  // namespace tokdyn
