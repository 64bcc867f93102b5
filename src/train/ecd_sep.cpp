// ECDSep (doc/science.md section 10.1): the separable Hamiltonian H = eta log(F~ - F0) + log(s + |p|^2),
// integrated by symplectic Euler with step lr:
//   p <- p - lr eta g~ / (F~ - F0),   theta <- theta + lr 2 p / (s + |p|^2)
// (F~, g~ with the weight decay as in ECD). Both updates keep <p, delta_A theta> for a symmetry A of the
// loss exactly: the kick is along g, orthogonal to delta_A theta, and <p, A p> = 0.
#include <cmath>

#include "styles.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

// The values of its keys (outside the anonymous namespace: the registry's factory keeps a copy).
struct EcdSepSettings {
  double lr, eta, F0, s, weight_decay;
  bool F0_auto;       // F0 = the lowest loss so far - 1 (LossOffset)
  bool random_start;  // p(0) a random unit vector instead of 0
  static const KeyTable<EcdSepSettings>& keys() {
    static const KeyTable<EcdSepSettings> table =
        KeyTable<EcdSepSettings>("ecdsep")
            .real("lr", &EcdSepSettings::lr, 0.01, "ECDSep: step", 0.0, 1e6, true)
            .real("eta", &EcdSepSettings::eta, 1.0, "ECDSep: eta", 0.0, 1e12, true)
            .real_or("F0", &EcdSepSettings::F0, &EcdSepSettings::F0_auto, "auto", "0",
                     "ECDSep: loss offset F0; auto: the lowest loss so far - 1", -1e12, 1e12)
            .real("s", &EcdSepSettings::s, 1.0, "ECDSep: s in log(s + |p|^2)", 0.0, 1e12, true)
            .real("weight_decay", &EcdSepSettings::weight_decay, 0.0, "ECDSep: w |theta|^2 / 2 added to the loss", 0.0)
            .either("start", &EcdSepSettings::random_start, {"zero", "random"}, false,
                    "ECDSep: p(0) = 0 or a random unit vector");
    return table;
  }
};

namespace {

template <class T>
class EcdSep : public Optimizer<T> {
 public:
  using Settings = EcdSepSettings;
  EcdSep(const Settings& s, const OptimizerContext& c, std::size_t n) : s_(s), p_(n, T(0)) {
    offset_.automatic = s.F0_auto, offset_.fixed = s.F0;
    if (s.random_start) {
      // A random initial momentum of unit length.
      std::vector<double> v(n);
      RandomStream(c.seed, Purpose::optimizer_start).normals(0, 0, v.data(), n);
      double norm = 0;
      for (double x : v) norm += x * x;
      for (std::size_t k = 0; k < n; ++k) p_[k] = static_cast<T>(v[k] / std::sqrt(norm));
    }
  }

  void step(double loss, const T* g, T* theta) override {
    const std::size_t n = p_.size();
    const double q2 = s_.weight_decay != 0 ? dot(theta, theta, 0, n) : 0.0;
    const double F = loss + 0.5 * s_.weight_decay * q2;  // F~
    const double excess = F - offset_.at(F);
    if (!(excess > 1e-40)) return;  // at or below F0: no step (ECD's default eps2)
    const double kick = s_.lr * s_.eta / excess;
    for (std::size_t k = 0; k < n; ++k) {
      const double gk = static_cast<double>(g[k]) + s_.weight_decay * static_cast<double>(theta[k]);
      p_[k] = static_cast<T>(p_[k] - kick * gk);
    }
    const double p2 = dot(p_.data(), p_.data(), 0, n);
    const double speed = 2 * s_.lr / (s_.s + p2);
    energy_ = s_.eta * std::log(excess) + std::log(s_.s + p2);
    for (std::size_t k = 0; k < n; ++k) theta[k] = static_cast<T>(theta[k] + speed * p_[k]);
    this->steps_ += 1;
  }

  const std::vector<T>& momentum() const override { return p_; }
  double energy() const override { return energy_; }
  std::vector<std::pair<std::string, std::vector<T>*>> state_vectors() override { return {{"p", &p_}}; }
  std::vector<std::pair<std::string, double*>> state_scalars() override {
    return {{"steps", &this->steps_}, {"F_min", &offset_.minimum}};
  }
  std::string report() const override { return offset_.report("ecdsep"); }

 private:
  Settings s_;
  std::vector<T> p_;
  double energy_ = NAN;  // H at the last step (not checkpointed: a diagnostic of that step)
  LossOffset offset_;
};

}  // namespace

void add_ecd_sep(OptimizerRegistry& r) {
  add_optimizer_class<EcdSep>(r, "ecdsep", "ECD with the separable Hamiltonian eta log(F - F0) + log(s + |p|^2), symplectic Euler");
}

}  // namespace tokdyn
