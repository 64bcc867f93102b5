// An optimizer from outside src/: plain gradient descent, theta <- theta - lr g, with its one key
// `test-sgd.lr`. The whole of what adding an optimizer takes: this file (its settings with their keys, its
// class) and the registration line at the end. cli_optimizer_style checks that tokdyn train lists it, reads
// its key and takes the steps of SGDM without momentum, bit for bit.
#include <string>
#include <vector>

#include "tokdyn/train/optimizer.hpp"

namespace tokdyn {

struct PlainSgdSettings {
  double lr;
  static const KeyTable<PlainSgdSettings>& keys() {
    static const KeyTable<PlainSgdSettings> table = KeyTable<PlainSgdSettings>("test-sgd").real(
        "lr", &PlainSgdSettings::lr, 0.1, "test-sgd: learning rate", 0.0, 1e6, true);
    return table;
  }
};

template <class T>
class PlainSgd : public Optimizer<T> {
 public:
  using Settings = PlainSgdSettings;
  PlainSgd(const Settings& s, const OptimizerContext&, std::size_t n) : lr_(s.lr), g_(n, T(0)) {}

  void step(double, const T* g, T* theta) override {
    for (std::size_t k = 0; k < g_.size(); ++k) {
      g_[k] = g[k];
      theta[k] = static_cast<T>(theta[k] - lr_ * static_cast<double>(g[k]));
    }
    this->steps_ += 1;
  }
  // The last gradient: SGDM's buffer when its momentum is 0.
  const std::vector<T>& momentum() const override { return g_; }
  std::vector<std::pair<std::string, std::vector<T>*>> state_vectors() override { return {{"gradient", &g_}}; }
  std::vector<std::pair<std::string, double*>> state_scalars() override { return {{"steps", &this->steps_}}; }

 private:
  double lr_;
  std::vector<T> g_;
};

// The registration: one line.
static const bool registered =
    (add_optimizer_class<PlainSgd>(optimizer_registry(), "test-sgd", "plain gradient descent (a test-only optimizer)"), true);

}  // namespace tokdyn
