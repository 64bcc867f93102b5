// AdamW as PyTorch's: decoupled weight decay, bias-corrected moments,
//   theta <- theta (1 - lr w);  m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
//   theta <- theta - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// Its per-coordinate preconditioner is not invariant under the rotations of a head: no charge survives.
#include <cmath>

#include "styles.hpp"

namespace tokdyn {

// The values of its keys (outside the anonymous namespace: the registry's factory keeps a copy).
struct AdamWSettings {
  double lr, beta1, beta2, eps, weight_decay;
  static const KeyTable<AdamWSettings>& keys() {
    static const KeyTable<AdamWSettings> table =
        KeyTable<AdamWSettings>("adamw")
            .real("lr", &AdamWSettings::lr, 1e-4, "AdamW: learning rate", 0.0, 1e6, true)
            .real("beta1", &AdamWSettings::beta1, 0.9, "AdamW: beta1", 0.0, 1.0)
            .real("beta2", &AdamWSettings::beta2, 0.95, "AdamW: beta2", 0.0, 1.0)
            .real("eps", &AdamWSettings::eps, 1e-8, "AdamW: epsilon", 0.0, 1.0, true)
            .real("weight_decay", &AdamWSettings::weight_decay, 0.01, "AdamW: decoupled weight decay", 0.0);
    return table;
  }
};

namespace {

// One step over the flat vector; c1, c2 the bias corrections. In double whatever T (the conversions vectorise);
// the settings copied and the vectors restrict, so that the loop vectorises.
template <class T>
TOKDYN_VECTOR_CLONES void adamw_update(const AdamWSettings& s, double c1, double c2, std::size_t n,
                                       const T* __restrict g, T* __restrict m_, T* __restrict v_, T* __restrict theta) {
  const double b1 = s.beta1, b2 = s.beta2, lr = s.lr, eps = s.eps, decay = 1 - s.lr * s.weight_decay;
  for (std::size_t k = 0; k < n; ++k) {
    const double gk = g[k];
    const double m = b1 * m_[k] + (1 - b1) * gk;
    const double v = b2 * v_[k] + (1 - b2) * gk * gk;
    m_[k] = static_cast<T>(m);
    v_[k] = static_cast<T>(v);
    theta[k] = static_cast<T>(theta[k] * decay - lr * (m / c1) / (std::sqrt(v / c2) + eps));
  }
}

template <class T>
class AdamW : public Optimizer<T> {
 public:
  using Settings = AdamWSettings;
  AdamW(const Settings& s, const OptimizerContext&, std::size_t n) : s_(s), m_(n, T(0)), v_(n, T(0)) {}

  void step(double, const T* g, T* theta) override {
    const double t = this->steps_ + 1;
    const double c1 = 1 - std::pow(s_.beta1, t), c2 = 1 - std::pow(s_.beta2, t);
    adamw_update(s_, c1, c2, m_.size(), g, m_.data(), v_.data(), theta);
    this->steps_ = t;
  }

  const std::vector<T>& momentum() const override { return m_; }
  std::vector<std::pair<std::string, std::vector<T>*>> state_vectors() override { return {{"m", &m_}, {"v", &v_}}; }
  std::vector<std::pair<std::string, double*>> state_scalars() override { return {{"steps", &this->steps_}}; }

 private:
  Settings s_;
  std::vector<T> m_, v_;
};

}  // namespace

void add_adamw(OptimizerRegistry& r) { add_optimizer_class<AdamW>(r, "adamw", "Adam with decoupled weight decay"); }

}  // namespace tokdyn
