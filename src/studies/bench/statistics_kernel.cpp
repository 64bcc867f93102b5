// bench statistics: the pair statistics' own pass (E_beta, cosines, clusters, histogram) over N random
// tokens, N(N-1)/2 unordered pairs, and the fraction of the machine's DGEMM rate of its Gram tiles.
#include "kernel.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"

namespace tokdyn {
namespace {

class StatisticsBench : public BenchKernel {
 public:
  explicit StatisticsBench(BenchInput& in)
      : BenchKernel(in), pass_(in.comm.get(), in.partition, in.d, 1.0, 50, in.tile) {
    const double n = static_cast<double>(in.partition.n_global);
    work = n * (n - 1) / 2;
  }
  void once() override { pass_.compute(in_.x.data()); }
  std::vector<std::string> report(double best) const override {
    return {fraction_of_peak(in_.comm, work / best, 2.0 * in_.d, "Gram tiles", false)};  // a Gram entry per pair
  }

 protected:
  std::string what() const override { return "statistics"; }

 private:
  PairStatisticsPass pass_;
};

}  // namespace

std::unique_ptr<BenchKernel> make_statistics_kernel(BenchInput& in) { return std::make_unique<StatisticsBench>(in); }

}  // namespace tokdyn
