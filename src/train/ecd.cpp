// ECD, energy-conserving descent (doc/science.md section 10.1), in the form of the paper's optimizer
// ("ECD_q1_scaled"): a velocity u of unit length, kicked by the gradient's part across u, moving
// theta by dt u; with F~ = F + w |theta|^2 / 2, g~ = g + w theta and F0 a number or (auto) the lowest F~ so
// far less 1, each step with F~ - F0 > eps2 does
//   u <- u / |u|                                   (unless | 1 - |u|^2 | < eps1)
//   u <- u - c dt / (F~ - F0) (g~ - u (u . g~))    c = eta D / (2 (D - 1)), dt = lr / sqrt(eta)
//   theta <- theta + dt u
//   u <- |u| (u/|u| + nu~ z) / |u/|u| + nu~ z|     nu~ = nu / sqrt(D), z ~ N(0, I_D) from (seed, step)
// starting from u = -g/|g| (or a random unit vector). u . g~ is taken over the whole vector, or block
// by block as in the authors' code (tensor_projection), which does not conserve the charges.
#include <cmath>

#include "styles.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

// The values of its keys (outside the anonymous namespace: the registry's factory keeps a copy).
struct EcdSettings {
  double lr, eta, F0, nu, eps1, eps2, weight_decay;
  bool F0_auto;            // F0 = the lowest loss so far - 1 (LossOffset)
  bool tensor_projection;  // u . g per parameter tensor (the authors' code) instead of the whole vector
  bool random_start;       // u(0) a random unit vector instead of -g/|g|
  static const KeyTable<EcdSettings>& keys() {
    static const KeyTable<EcdSettings> table =
        KeyTable<EcdSettings>("ecd")
            .real("lr", &EcdSettings::lr, 1.0, "ECD: step scale (dt = lr / sqrt(eta))", 0.0, 1e6, true)
            .real("eta", &EcdSettings::eta, 100.0, "ECD: concentration eta", 0.0, 1e12, true)
            .real_or("F0", &EcdSettings::F0, &EcdSettings::F0_auto, "auto", "auto",
                     "ECD: loss offset F0 (the kick divides by F - F0); auto: the lowest loss so far - 1", -1e12, 1e12)
            .real("nu", &EcdSettings::nu, 0.0, "ECD: bounce amplitude nu (random rotations of u; 0: none)", 0.0)
            .real("eps1", &EcdSettings::eps1, 1e-10, "ECD: |1 - |u|^2| below which u is not renormalised", 0.0)
            .real("eps2", &EcdSettings::eps2, 1e-40, "ECD: steps with F - F0 below this change nothing", 0.0)
            .real("weight_decay", &EcdSettings::weight_decay, 0.0, "ECD: w |theta|^2 / 2 added to the loss", 0.0)
            .either("projection", &EcdSettings::tensor_projection, {"global", "tensor"}, false,
                    "ECD: u . g over the whole vector (conserves the charges) or per tensor as the authors' code")
            .either("start", &EcdSettings::random_start, {"gradient", "random"}, false,
                    "ECD: u(0) = -g/|g| or a random unit vector");
    return table;
  }
};

namespace {

template <class T>
class Ecd : public Optimizer<T> {
 public:
  using Settings = EcdSettings;
  Ecd(const Settings& s, const OptimizerContext& c, std::size_t n)
      : s_(s), seed_(c.seed), u_(n), blocks_(c.blocks), gw_(n), z_(s.nu != 0 ? n : 0) {
    offset_.automatic = s.F0_auto, offset_.fixed = s.F0;
    if (n < 2) throw InputError("ecd needs at least 2 parameters (c = eta D / (2 (D - 1)))");
    if (!s.tensor_projection || blocks_.empty()) blocks_ = {ParameterBlock{"all", 0, n}};
    std::size_t next = 0;
    for (const ParameterBlock& b : blocks_) {
      if (b.begin != next) throw InputError("ecd: the parameter blocks must tile the vector in order");
      next = b.begin + b.size;
    }
    if (next != n)
      throw InputError("ecd: the parameter blocks cover " + std::to_string(next) + " of " + std::to_string(n));
  }

  void step(double loss, const T* g, T* theta) override {
    const std::size_t n = u_.size();
    const double D = static_cast<double>(n);
    const double dt = s_.lr / std::sqrt(s_.eta), nu = s_.nu / std::sqrt(D);
    std::vector<double>& gw = gw_;  // g~ = g + w theta
    for (std::size_t k = 0; k < n; ++k) gw[k] = static_cast<double>(g[k]) + s_.weight_decay * static_cast<double>(theta[k]);
    const double q2 = dot(theta, theta, 0, n);
    if (!started_) start(gw);
    const double F = loss + 0.5 * s_.weight_decay * q2;  // F~
    const double excess = F - offset_.at(F);             // F~ - F0
    if (!(excess > s_.eps2)) return;
    // Back to unit speed (the noise step keeps |u|; round-off and the kick do not).
    const double scale = (std::abs(1 - p2_) < s_.eps1 || p2_ == 0) ? 1.0 : std::sqrt(1 / p2_);
    for (T& v : u_) v = static_cast<T>(scale * v);
    const double kick = -0.5 * dt * s_.eta * D / (D - 1) / excess;  // -c dt / (F~ - F0)
    for (const ParameterBlock& b : blocks_) {
      const double ug = dot(u_.data(), gw.data(), b.begin, b.begin + b.size);
      for (std::size_t k = b.begin; k < b.begin + b.size; ++k)
        u_[k] = static_cast<T>(u_[k] + kick * (gw[k] - u_[k] * ug));
    }
    p2_ = dot(u_.data(), u_.data(), 0, n);
    for (std::size_t k = 0; k < n; ++k) theta[k] = static_cast<T>(theta[k] + dt * u_[k]);
    const double norm = std::sqrt(p2_);
    if (nu != 0) {
      // A small random rotation of the direction at fixed |u|.
      std::vector<double>& z = z_;
      RandomStream(seed_, Purpose::ecd_noise).normals(static_cast<std::uint64_t>(this->steps_), 0, z.data(), n);
      double m2 = 0;
      for (std::size_t k = 0; k < n; ++k) {
        z[k] = u_[k] / norm + nu * z[k];
        m2 += z[k] * z[k];
      }
      const double back = norm / std::sqrt(m2);
      for (std::size_t k = 0; k < n; ++k) u_[k] = static_cast<T>(back * z[k]);
    }
    p2_ = norm * norm;
    this->steps_ += 1;
  }

  const std::vector<T>& momentum() const override { return u_; }
  double energy() const override { return p2_; }
  std::vector<std::pair<std::string, std::vector<T>*>> state_vectors() override { return {{"u", &u_}}; }
  std::vector<std::pair<std::string, double*>> state_scalars() override {
    return {{"steps", &this->steps_}, {"p2", &p2_}, {"started", &started_}, {"F_min", &offset_.minimum}};
  }
  std::string report() const override { return offset_.report("ecd"); }

 private:
  void start(const std::vector<double>& g) {
    const std::size_t n = u_.size();
    std::vector<double> v(n);
    if (s_.random_start)
      RandomStream(seed_, Purpose::optimizer_start).normals(0, 0, v.data(), n);
    else
      for (std::size_t k = 0; k < n; ++k) v[k] = -g[k];
    double norm = 0;
    for (double x : v) norm += x * x;
    norm = std::sqrt(norm);
    if (!(norm > 0)) throw InputError("ecd: the first gradient is zero or not finite: no direction to start along");
    for (std::size_t k = 0; k < n; ++k) u_[k] = static_cast<T>(v[k] / norm);
    p2_ = 1;
    started_ = 1;
  }

  Settings s_;
  std::uint64_t seed_;
  std::vector<T> u_;
  std::vector<ParameterBlock> blocks_;
  std::vector<double> gw_, z_;  // g~ and the noise of a step (scratch, kept to allocate once)
  LossOffset offset_;
  double p2_ = 1;       // |u|^2 after the last step
  double started_ = 0;  // 1 once u was set from the first gradient (a double: checkpointed with the scalars)
};

}  // namespace

void add_ecd(OptimizerRegistry& r) {
  add_optimizer_class<Ecd>(r, "ecd", "energy-conserving descent: unit-speed velocity, kicked by the gradient across it");
}

}  // namespace tokdyn
