// The kernels of tokdyn bench, one class per kernel registered by name (kernels.cpp), each reading its own
// bench.* keys. Internal to src/studies/bench/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/core/deck/registry.hpp"

namespace tokdyn {

// What every kernel gets: the deck, the ranks, N random tokens on the sphere x [n_local, d] and an output
// buffer out of the same shape.
struct BenchInput {
  const Comm& comm;
  const Deck& deck;
  Partition partition;
  int d = 0, tile = 0;
  std::vector<double> x, out;
};

// One kernel: built from the deck (the constructor may print nothing: bench prints banner() first), then
// applied once per warm-up and repeat. A repeat does `work` units of `unit`.
class BenchKernel {
 public:
  explicit BenchKernel(BenchInput& in) : in_(in) {}
  virtual ~BenchKernel() = default;
  virtual void once() = 0;
  // The first lines: "bench NAME: N = ..., d = ..., tile = ..., P ranks" and what the kernel adds.
  virtual std::vector<std::string> banner() const;
  // Lines after the best time: rates in other units, errors against exact sums, fraction of peak.
  virtual std::vector<std::string> report(double best) const { return {}; }
  // "(tokens: X MiB per rank)" after the peak memory.
  virtual std::string memory() const;
  double work = 0;
  std::string unit = "pairs";

 protected:
  virtual std::string what() const = 0;  // the kernel as the banner names it
  BenchInput& in_;
};

using BenchKernels = Registry<BenchKernel, BenchInput&>;
const BenchKernels& bench_kernels();

// "  = G GFLOP/s in the tiles' products (WHAT, F flops a pair) = P % of this machine's FMA peak (measured: independent
// FMA chains on every rank at once) and Q % of its GEMM rate", in float64 or float32.
std::string fraction_of_peak(const Comm& comm, double pairs_per_second, double flops_per_pair, const std::string& what,
                             bool float32);

// "  beta = B: Fourier truncation p = P" (the circle and the Fourier styles).
std::string fourier_truncation(double beta);

// The kernels' factories (one file each), listed by kernels.cpp.
std::unique_ptr<BenchKernel> make_attention_kernel(BenchInput& in);
std::unique_ptr<BenchKernel> make_statistics_kernel(BenchInput& in);
std::unique_ptr<BenchKernel> make_circle_kernel(BenchInput& in);
std::unique_ptr<BenchKernel> make_mlp_kernel(BenchInput& in);
std::unique_ptr<BenchKernel> make_markov_kernel(BenchInput& in);
std::unique_ptr<BenchKernel> make_snapshot_kernel(BenchInput& in);

}  // namespace tokdyn
