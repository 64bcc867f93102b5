// SGDM: heavy-ball momentum as PyTorch's SGD (no dampening), optionally Nesterov, optionally from a
// random initial buffer N(0, sigma^2) (stream (seed, optimizer_start)):
//   d = g + w theta;  b <- mu b + d  (b = d at the first step from a zero buffer)
//   theta <- theta - lr (d + mu b)  (Nesterov)  or  theta - lr b
// The friction mu < 1 makes every charge <b, delta_A theta> decay.

#include "styles.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

// The values of its keys (outside the anonymous namespace: the registry's factory keeps a copy).
struct SgdmSettings {
  double lr, momentum, initial_buffer, weight_decay;
  bool nesterov;
  static const KeyTable<SgdmSettings>& keys() {
    static const KeyTable<SgdmSettings> table =
        KeyTable<SgdmSettings>("sgdm")
            .real("lr", &SgdmSettings::lr, 0.03, "SGDM: learning rate", 0.0, 1e6, true)
            .real("momentum", &SgdmSettings::momentum, 0.95, "SGDM: momentum", 0.0, 1.0)
            .boolean("nesterov", &SgdmSettings::nesterov, true, "SGDM: Nesterov momentum")
            .real("initial_buffer", &SgdmSettings::initial_buffer, 0.0,
                  "SGDM: standard deviation of a random initial buffer (0: zeros)", 0.0)
            .real("weight_decay", &SgdmSettings::weight_decay, 0.0, "SGDM: L2 weight decay", 0.0);
    return table;
  }
};

namespace {

template <class T>
class Sgdm : public Optimizer<T> {
 public:
  using Settings = SgdmSettings;
  Sgdm(const Settings& s, const OptimizerContext& c, std::size_t n) : s_(s), b_(n, T(0)) {
    if (s.initial_buffer > 0) {
      std::vector<double> v(n);
      RandomStream(c.seed, Purpose::optimizer_start).normals(1, 0, v.data(), n);
      for (std::size_t k = 0; k < n; ++k) b_[k] = static_cast<T>(s.initial_buffer * v[k]);
    }
  }

  void step(double, const T* g, T* theta) override {
    const bool fresh = this->steps_ == 0 && s_.initial_buffer == 0;  // PyTorch: b = d at the first step
    for (std::size_t k = 0; k < b_.size(); ++k) {
      const double d = static_cast<double>(g[k]) + s_.weight_decay * static_cast<double>(theta[k]);
      const double b = fresh ? d : s_.momentum * b_[k] + d;
      b_[k] = static_cast<T>(b);
      theta[k] = static_cast<T>(theta[k] - s_.lr * (s_.nesterov ? d + s_.momentum * b : b));
    }
    this->steps_ += 1;
  }

  const std::vector<T>& momentum() const override { return b_; }
  std::vector<std::pair<std::string, std::vector<T>*>> state_vectors() override { return {{"buffer", &b_}}; }
  std::vector<std::pair<std::string, double*>> state_scalars() override { return {{"steps", &this->steps_}}; }

 private:
  Settings s_;
  std::vector<T> b_;
};

}  // namespace

void add_sgdm(OptimizerRegistry& r) {
  add_optimizer_class<Sgdm>(r, "sgdm", "SGD with heavy-ball momentum (Nesterov by default), optional random initial buffer");
}

}  // namespace tokdyn
