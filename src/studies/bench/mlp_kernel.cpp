// bench mlp: a fresh draw of the random MLP and its application to N random tokens: token-neurons/s.
#include "kernel.hpp"
#include "tokdyn/noise/random_mlp.hpp"

namespace tokdyn {
namespace {

MlpParams mlp_params(const Deck& deck) {
  MlpParams p;
  p.width = deck.get_int("bench.width");
  p.activation = deck.get_text("bench.activation");
  return p;
}

class MlpBench : public BenchKernel {
 public:
  explicit MlpBench(BenchInput& in) : BenchKernel(in), mlp_(mlp_params(in.deck), in.d) {
    work = static_cast<double>(in.partition.n_global) * static_cast<double>(in.deck.get_int("bench.width"));
    unit = "token-neurons";
  }
  void once() override {
    mlp_.draw(1);
    mlp_.apply(in_.x.data(), in_.partition.count(in_.comm.rank()), in_.out.data());
  }

 protected:
  std::string what() const override { return "mlp"; }

 private:
  RandomMlp mlp_;
};

}  // namespace

std::unique_ptr<BenchKernel> make_mlp_kernel(BenchInput& in) { return std::make_unique<MlpBench>(in); }

}  // namespace tokdyn
