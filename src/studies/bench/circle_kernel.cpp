// bench circle: E_beta and the mean of N points on S^1 by the Fourier series, O(N p): points/s.
#include "kernel.hpp"
#include "tokdyn/attention/fourier_attention.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {
namespace {

class CircleBench : public BenchKernel {
 public:
  explicit CircleBench(BenchInput& in) : BenchKernel(in), beta_(in.deck.get_real("bench.beta")) {
    if (in.d != 2) throw InputError("bench.kernel = circle needs bench.d = 2");
    work = static_cast<double>(in.partition.n_global);
    unit = "points";
  }
  void once() override {
    circle_statistics(in_.comm.get(), in_.partition.count(in_.comm.rank()), in_.x.data(), nullptr, beta_);
  }
  std::vector<std::string> banner() const override {
    std::vector<std::string> lines = BenchKernel::banner();
    lines.push_back(fourier_truncation(beta_));
    return lines;
  }

 protected:
  std::string what() const override { return "circle"; }

 private:
  double beta_;
};

}  // namespace

std::unique_ptr<BenchKernel> make_circle_kernel(BenchInput& in) { return std::make_unique<CircleBench>(in); }

}  // namespace tokdyn
