// The optimizers of train/ (doc/science.md section 10.1) against closed forms and conservation laws:
// first steps from their formulas; on a loss with a continuous symmetry (W V invariant under
// W -> W R, V -> R^T V, R in O(h)) the charges l_A = <P, delta_A theta> stay at round-off for ECD from
// its default start, keep their ratios for ECD from a random start (global projection; the per-tensor
// projection and the noise break them), are conserved one by one by ECDSep, decay under SGDM and appear
// under AdamW; the authors' sombrero illustration; checkpointed state resumes bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "optimizers.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/train/optimizer.hpp"

namespace tokdyn {
namespace {

// theta = (W [a, h], V [h, b]), F = |W V - Y|^2 / 2 with a fixed target Y [a, b].
struct Toy {
  int a = 3, h = 3, b = 4;
  std::vector<double> target;
  Toy() : target(static_cast<std::size_t>(a) * b) {
    RandomStream(5, Purpose::test).normals(0, 0, target.data(), target.size());
  }
  std::size_t size() const { return static_cast<std::size_t>(a) * h + static_cast<std::size_t>(h) * b; }
  std::size_t v0() const { return static_cast<std::size_t>(a) * h; }
  // loss and gradient at theta
  template <class T>
  double loss(const T* theta, T* grad) const {
    const T* W = theta;
    const T* V = theta + v0();
    std::vector<double> r(static_cast<std::size_t>(a) * b);  // W V - Y [a, b]
    double f = 0;
    for (int i = 0; i < a; ++i)
      for (int j = 0; j < b; ++j) {
        double s = -target[i * b + j];
        for (int k = 0; k < h; ++k) s += static_cast<double>(W[i * h + k]) * V[k * b + j];
        r[i * b + j] = s;
        f += 0.5 * s * s;
      }
    for (int i = 0; i < a; ++i)  // dW = r V^T
      for (int k = 0; k < h; ++k) {
        double s = 0;
        for (int j = 0; j < b; ++j) s += r[i * b + j] * V[k * b + j];
        grad[i * h + k] = static_cast<T>(s);
      }
    for (int k = 0; k < h; ++k)  // dV = W^T r
      for (int j = 0; j < b; ++j) {
        double s = 0;
        for (int i = 0; i < a; ++i) s += static_cast<double>(W[i * h + k]) * r[i * b + j];
        grad[v0() + k * b + j] = static_cast<T>(s);
      }
    return f;
  }
  // l_A = <P_W, W A> - <P_V, A V> for the generators A = e_p e_q^T - e_q e_p^T, p < q.
  std::vector<double> charges(const std::vector<double>& theta, const std::vector<double>& P) const {
    std::vector<double> out;
    for (int p = 0; p < h; ++p)
      for (int q = p + 1; q < h; ++q) {
        double l = 0;
        for (int i = 0; i < a; ++i)  // (W A)_{i p} = -W_{i q}, (W A)_{i q} = W_{i p}
          l += P[i * h + p] * -theta[i * h + q] + P[i * h + q] * theta[i * h + p];
        for (int j = 0; j < b; ++j)  // (A V)_{p j} = V_{q j}, (A V)_{q j} = -V_{p j}
          l -= P[v0() + p * b + j] * theta[v0() + q * b + j] - P[v0() + q * b + j] * theta[v0() + p * b + j];
        out.push_back(l);
      }
    return out;
  }
  std::vector<double> start() const {
    std::vector<double> theta(size());
    RandomStream(6, Purpose::test).normals(0, 0, theta.data(), theta.size());
    for (double& v : theta) v *= 0.5;
    return theta;
  }
};

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// Runs `steps` steps of optimizer `name` on the toy; returns the charges after every step.
using Keys = std::vector<std::string>;

std::vector<std::vector<double>> charge_history(const std::string& name, const Keys& keys, int steps,
                                                std::vector<double>* scale = nullptr,
                                                const OptimizerContext& context = {}) {
  const Toy toy;
  std::vector<double> theta = toy.start(), grad(toy.size());
  auto opt = test::make_optimizer<double>(name, keys, toy.size(), context);
  std::vector<std::vector<double>> out;
  for (int k = 0; k < steps; ++k) {
    const double f = toy.loss(theta.data(), grad.data());
    opt->step(f, grad.data(), theta.data());
    out.push_back(toy.charges(theta, opt->momentum()));
    if (scale) scale->push_back(norm(theta) * norm(opt->momentum()));
  }
  return out;
}

TEST(Optimizers, Registry) {
  EXPECT_EQ(optimizers().names(), (std::vector<std::string>{"ecd", "ecdsep", "sgdm", "adamw"}));
  try {
    test::make_optimizer<float>("adam", {}, 4);
    FAIL() << "no error for an unknown optimizer";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown optimizer 'adam' (known: ecd, ecdsep, sgdm, adamw)"),
              std::string::npos);
  }
  EXPECT_EQ(test::make_optimizer<float>("ecd", {}, 10)->state_per_parameter(), 1u);
  EXPECT_EQ(test::make_optimizer<float>("adamw", {}, 10)->state_per_parameter(), 2u);
  // Each optimizer's keys are in its own section, declared by its class.
  DeckSchema schema;
  optimizers().add_keys(schema);
  for (const char* key : {"ecd.eta", "ecd.projection", "ecdsep.s", "ecdsep.start", "sgdm.nesterov", "adamw.beta2"})
    EXPECT_TRUE(schema.find(key)) << key;
}

// One step from the formulas (theta = (1, -2, 0.5), g = (0.3, 0.4, -1.2), loss 3).
TEST(Optimizers, FirstSteps) {
  const std::vector<double> theta0{1, -2, 0.5}, g{0.3, 0.4, -1.2};
  const double gn = norm(g);
  auto first = [&](const std::string& name, const Keys& keys) {
    std::vector<double> theta = theta0;
    test::make_optimizer<double>(name, keys, 3)->step(3.0, g.data(), theta.data());
    return theta;
  };
  // ECD from u = -g/|g|: the kick g - u (u . g) vanishes; theta moves by dt = lr / sqrt(eta) along -g/|g|.
  std::vector<double> t = first("ecd", {"ecd.lr=0.7", "ecd.eta=4", "ecd.F0=-1"});
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(t[k], theta0[k] - 0.35 * g[k] / gn, 1e-15);
  // ECDSep: p = -lr eta g / (F - F0), theta += lr 2 p / (s + |p|^2).
  t = first("ecdsep", {"ecdsep.lr=0.7", "ecdsep.eta=4", "ecdsep.F0=-1", "ecdsep.s=1.5"});
  const double kick = 0.7 * 4 / 4.0, p2 = kick * kick * gn * gn;
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(t[k], theta0[k] - 0.7 * 2 * kick * g[k] / (1.5 + p2), 1e-15);
  // F0 = auto: the lowest loss so far less 1, so F - F0 = 1 at the first step.
  t = first("ecdsep", {"ecdsep.lr=0.7", "ecdsep.eta=4", "ecdsep.F0=auto", "ecdsep.s=1.5"});
  const double kick1 = 0.7 * 4 / 1.0, q2 = kick1 * kick1 * gn * gn;
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(t[k], theta0[k] - 0.7 * 2 * kick1 * g[k] / (1.5 + q2), 1e-15);
  // SGDM, Nesterov, zero buffer: b = g, theta -= lr (g + mu g).
  t = first("sgdm", {"sgdm.lr=0.1", "sgdm.momentum=0.9"});
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(t[k], theta0[k] - 0.1 * 1.9 * g[k], 1e-15);
  // AdamW: m^ = g, v^ = g^2: theta (1 - lr w) - lr g / (|g| + eps).
  t = first("adamw", {"adamw.lr=0.01", "adamw.weight_decay=0.1", "adamw.eps=1e-8"});
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(t[k], theta0[k] * (1 - 0.001) - 0.01 * g[k] / (std::abs(g[k]) + 1e-8), 1e-15);
}

// ECD with F0 = auto against a plain loop of its formulas: F0_k = min(F_0..F_k) - 1 (the kicks divide by
// F - F0 >= 1), 400 steps on the toy, where the loss falls by far more than 1 (so F0 moves).
TEST(Optimizers, EcdAutoOffsetAgainstAPlainLoop) {
  const Toy toy;
  const double lr = 0.05, eta = 10, dt = lr / std::sqrt(eta);
  std::vector<double> theta = toy.start(), grad(toy.size()), ref = theta, u(toy.size());
  const double D = static_cast<double>(toy.size());
  auto opt = test::make_optimizer<double>("ecd", {"ecd.lr=0.05", "ecd.eta=10", "ecd.F0=auto"}, toy.size());
  double lowest = INFINITY, first = 0, last = 0, p2 = 1;
  for (int k = 0; k < 400; ++k) {
    opt->step(toy.loss(theta.data(), grad.data()), grad.data(), theta.data());
    const double F = toy.loss(ref.data(), grad.data());
    if (k == 0) {
      first = F;
      for (std::size_t i = 0; i < u.size(); ++i) u[i] = -grad[i] / norm(grad);
    }
    last = F;
    lowest = std::min(lowest, F);
    const double F0 = lowest - 1;
    if (std::abs(1 - p2) >= 1e-10)
      for (double& v : u) v /= std::sqrt(p2);
    double ug = 0;
    for (std::size_t i = 0; i < u.size(); ++i) ug += u[i] * grad[i];
    const double kick = -0.5 * dt * eta * D / (D - 1) / (F - F0);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] += kick * (grad[i] - u[i] * ug);
    p2 = 0;
    for (double v : u) p2 += v * v;
    for (std::size_t i = 0; i < u.size(); ++i) ref[i] += dt * u[i];
  }
  EXPECT_GT(first - last, 2.0) << "F0 must move for the test to mean anything";
  double diff = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) diff = std::max(diff, std::abs(theta[i] - ref[i]));
  EXPECT_LT(diff, 1e-10) << "loss " << first << " -> " << last;
  EXPECT_NE(opt->report().find("F0 = auto ended at"), std::string::npos) << opt->report();
}

TEST(Optimizers, ToyLossIsSymmetric) {
  // The generators are symmetries: <grad F, delta_A theta> = 0 (to round-off).
  const Toy toy;
  std::vector<double> theta = toy.start(), grad(toy.size());
  toy.loss(theta.data(), grad.data());
  for (double l : toy.charges(theta, grad)) EXPECT_LT(std::abs(l), 1e-14 * norm(theta) * norm(grad));
}

TEST(Optimizers, EcdChargesStayZeroFromTheDefaultStart) {
  std::vector<double> scale;
  const auto h = charge_history("ecd", {"ecd.lr=0.05", "ecd.eta=10", "ecd.F0=-1"}, 3000, &scale);
  double worst = 0;
  for (std::size_t k = 0; k < h.size(); ++k)
    for (double l : h[k]) worst = std::max(worst, std::abs(l) / scale[k]);
  std::printf("ECD from u = -g/|g|: max |l_A| / (|theta| |u|) over 3000 steps = %.2e\n", worst);
  EXPECT_LT(worst, 1e-13);
}

// max over steps and generators of |l_A(t)/l_0(t) - l_A(0)/l_0(0)|.
double ratio_drift(const std::vector<std::vector<double>>& h) {
  double worst = 0;
  for (const auto& l : h)
    for (std::size_t a = 1; a < l.size(); ++a) worst = std::max(worst, std::abs(l[a] / l[0] - h[0][a] / h[0][0]));
  return worst;
}

TEST(Optimizers, EcdChargeRatiosFromARandomStart) {
  const Keys s{"ecd.lr=0.05", "ecd.eta=10", "ecd.F0=-1", "ecd.start=random"};
  // 200 steps: the common factor shrinks the charges (by 2000 steps they reach round-off, and their
  // ratios then mean nothing).
  const auto gh = charge_history("ecd", s, 200);
  const double global = ratio_drift(gh);
  // The authors' per-tensor projection (W and V blocks) and the velocity noise break the common factor.
  Keys t = s;
  t.push_back("ecd.projection=tensor");
  const Toy toy;
  OptimizerContext blocks;
  blocks.blocks = {{"W", 0, toy.v0()}, {"V", toy.v0(), toy.size() - toy.v0()}};
  const double tensor = ratio_drift(charge_history("ecd", t, 200, nullptr, blocks));
  // The blocks alone (the run always passes them) change nothing without ecd.projection = tensor.
  EXPECT_EQ(charge_history("ecd", s, 20, nullptr, blocks), charge_history("ecd", s, 20));
  Keys n = s;
  n.push_back("ecd.nu=0.1");
  const double noisy = ratio_drift(charge_history("ecd", n, 200));
  std::printf("ECD charge ratios over 200 steps from a random u (|l| from %.2e to %.2e): global projection %.2e, "
              "per-tensor %.2e, global with nu = 0.1 %.2e\n", norm(gh.front()), norm(gh.back()), global, tensor, noisy);
  EXPECT_LT(global, 1e-10);
  EXPECT_GT(tensor, 1e-6);
  EXPECT_GT(noisy, 1e-3);
}

TEST(Optimizers, EcdSepConservesEachCharge) {
  const auto h = charge_history("ecdsep", {"ecdsep.lr=0.01", "ecdsep.eta=1", "ecdsep.F0=-1", "ecdsep.start=random"}, 3000);
  double worst = 0;
  for (const auto& l : h)
    for (std::size_t a = 0; a < l.size(); ++a) worst = std::max(worst, std::abs(l[a] - h[0][a]) / norm(h[0]));
  std::printf("ECDSep: max |l_A(t) - l_A(1)| / |l(1)| over 3000 steps = %.2e\n", worst);
  EXPECT_LT(worst, 1e-12);
}

TEST(Optimizers, SgdmChargesDecayAdamWChargesAppear) {
  const auto sgdm = charge_history("sgdm", {"sgdm.lr=0.01", "sgdm.momentum=0.95", "sgdm.initial_buffer=0.1"}, 400);
  const double decay = norm(sgdm.back()) / norm(sgdm.front());
  // Friction: the buffer's charge shrinks by mu a step (the gradient adds none).
  std::printf("SGDM (mu = 0.95, random buffer): |l| after 400 steps / after 1 = %.2e (mu^399 = %.2e)\n", decay,
              std::pow(0.95, 399));
  EXPECT_LT(decay, 1e-6);
  std::vector<double> scale;
  const auto adam = charge_history("adamw", {"adamw.lr=1e-3", "adamw.weight_decay=0"}, 200, &scale);
  double most = 0;
  for (std::size_t k = 0; k < adam.size(); ++k) most = std::max(most, norm(adam[k]) / scale[k]);
  std::printf("AdamW from m = 0: max |l| / (|theta| |m|) over 200 steps = %.2e\n", most);
  EXPECT_GT(most, 1e-4);
}

// The authors' sombrero: F = (x^2 + y^2 - 1)^2 from (0.2, 0.5), 15000 ECD steps, lr 0.005, eta 5, F0 -1.
// The charge of the rotations, J = (F - F0)^{-c} (x u_y - y u_x) with c = eta D / (2 (D - 1)) = 5, is zero
// from the default start and stays at round-off with nu = 0; the velocity noise nu = 0.05 makes it wander.
double sombrero_max_charge(double nu) {
  OptimizerContext seed;
  seed.seed = 42;
  auto opt = test::make_optimizer<double>(
      "ecd", {"ecd.lr=0.005", "ecd.eta=5", "ecd.F0=-1", "ecd.nu=" + std::to_string(nu)}, 2, seed);
  double theta[2] = {0.2, 0.5}, most = 0;
  for (int k = 0; k < 15000; ++k) {
    const double r2 = theta[0] * theta[0] + theta[1] * theta[1];
    const double f = (r2 - 1) * (r2 - 1), g[2] = {4 * (r2 - 1) * theta[0], 4 * (r2 - 1) * theta[1]};
    opt->step(f, g, theta);
    const auto& u = opt->momentum();
    const double r2n = theta[0] * theta[0] + theta[1] * theta[1];
    most = std::max(most, std::abs(std::pow((r2n - 1) * (r2n - 1) + 1, -5.0) * (theta[0] * u[1] - theta[1] * u[0])));
  }
  return most;
}

TEST(Optimizers, Sombrero) {
  const double quiet = sombrero_max_charge(0), noisy = sombrero_max_charge(0.05);
  std::printf("sombrero, 15000 ECD steps: max |J| = %.2e at nu = 0, %.3f at nu = 0.05\n", quiet, noisy);
  EXPECT_LT(quiet, 1e-13);
  EXPECT_GT(noisy, 0.1);
}

// Checkpoint: 40 steps, the state copied into a new optimizer, 40 more: the same bits as 80 in one go
// (ECD with noise: the kicks are keyed by the step).
TEST(Optimizers, StateResumesBitForBit) {
  const Toy toy;
  const std::map<std::string, Keys> keys{
      {"ecd", {"ecd.lr=0.01", "ecd.eta=10", "ecd.F0=auto", "ecd.nu=0.05"}},  // auto: F_min is state
      {"ecdsep", {"ecdsep.lr=0.01", "ecdsep.eta=10", "ecdsep.F0=auto", "ecdsep.start=random"}},
      {"sgdm", {"sgdm.lr=0.01", "sgdm.initial_buffer=0.1"}},
      {"adamw", {"adamw.lr=1e-3"}}};
  for (const std::string& name : optimizers().names()) {
    const Keys& s = keys.at(name);
    auto run = [&](Optimizer<float>& opt, std::vector<float>& theta, int steps) {
      std::vector<float> grad(theta.size());
      for (int k = 0; k < steps; ++k) opt.step(toy.loss(theta.data(), grad.data()), grad.data(), theta.data());
    };
    std::vector<float> a(toy.size()), b;
    const std::vector<double> start = toy.start();
    std::copy(start.begin(), start.end(), a.begin());
    b = a;
    auto whole = test::make_optimizer<float>(name, s, toy.size());
    run(*whole, a, 80);
    auto first = test::make_optimizer<float>(name, s, toy.size());
    run(*first, b, 40);
    auto second = test::make_optimizer<float>(name, s, toy.size());
    auto from = first->state_vectors();
    auto to = second->state_vectors();
    for (std::size_t i = 0; i < from.size(); ++i) *to[i].second = *from[i].second;
    auto sf = first->state_scalars();
    auto st = second->state_scalars();
    for (std::size_t i = 0; i < sf.size(); ++i) *st[i].second = *sf[i].second;
    run(*second, b, 40);
    EXPECT_EQ(a, b) << name;
    EXPECT_EQ(second->steps(), 80) << name;
  }
}

}  // namespace
}  // namespace tokdyn
