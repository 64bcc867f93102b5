// Optimizers on a flat parameter vector (doc/science.md section 10), one class per style registered by
// name (src/train/optimizers.cpp): ECD (energy-conserving descent, the velocity u of unit speed), ECDSep
// (its separable Hamiltonian), SGDM (heavy ball, Nesterov) and AdamW. Templated on the scalar of the
// parameters (float for training, double for the checks); dot products and norms are summed in double.
// Every rank holds the whole vector and the all-reduced gradient and steps it itself: the same bits on
// every rank, and no communication here.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/deck/key_table.hpp"
#include "tokdyn/core/deck/registry.hpp"

namespace tokdyn {

// A contiguous block of the flat vector (one parameter tensor, or the tensors the authors' code keeps in
// one: Q, K and V weights together): ECD's per-tensor projection takes u . g block by block.
struct ParameterBlock {
  std::string name;
  std::size_t begin = 0, size = 0;
};

// What the run gives every optimizer besides its own keys.
struct OptimizerContext {
  std::uint64_t seed = 1;               // run.seed: random starts and noise
  std::vector<ParameterBlock> blocks;   // the parameter tensors in order (empty: one block, the whole vector)
};

template <class T>
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One step at the minibatch loss F and gradient g [n] of theta [n] (updated in place).
  virtual void step(double loss, const T* grad, T* theta) = 0;
  // The vector the charges are read from: the momentum conjugate to theta up to a common factor
  // (ECD: u; ECDSep: p; SGDM: the buffer; AdamW: its first moment) [n].
  virtual const std::vector<T>& momentum() const = 0;
  // The optimizer's conserved energy after the last step, NaN for those without one. ECD: |u|^2 after the
  // kick (the Hamiltonian of its metric in unit-speed variables: 1 for the continuous flow; the next step
  // renormalises it); ECDSep: eta log(F~ - F0) + log(s + |p|^2) at the step's loss.
  virtual double energy() const { return NAN; }
  // A line for the run's summary about the optimizer's own choices ("" when it has none): ECD's F0 = auto.
  virtual std::string report() const { return ""; }
  // The state a checkpoint keeps (vectors of n and scalars), by name.
  virtual std::vector<std::pair<std::string, std::vector<T>*>> state_vectors() = 0;
  virtual std::vector<std::pair<std::string, double*>> state_scalars() = 0;
  // Steps taken (steps that changed nothing, ECD at F~ - F0 <= eps2, are not counted).
  std::int64_t steps() const { return static_cast<std::int64_t>(steps_); }
  // Vectors of n the state holds besides theta (memory per parameter = (1 + this) sizeof(T)).
  std::size_t state_per_parameter() { return state_vectors().size(); }

 protected:
  double steps_ = 0;  // a double so that state_scalars() can hand it out with the rest
};

// An optimizer with its keys read from a deck: makes the optimizer once the run knows its vector and its
// scalar type.
struct OptimizerSetup {
  std::string name, summary;  // summary: its keys' values, for the run's banner ("lr 1, eta 100, F0 2, ...")
  std::function<std::unique_ptr<Optimizer<float>>(const OptimizerContext&, std::size_t)> make_float;
  std::function<std::unique_ptr<Optimizer<double>>(const OptimizerContext&, std::size_t)> make_double;
  template <class T>
  std::unique_ptr<Optimizer<T>> make(const OptimizerContext& context, std::size_t n) const {
    if constexpr (std::is_same_v<T, float>)
      return make_float(context, n);
    else
      return make_double(context, n);
  }
};

// The optimizers by name. Each declares its own keys, all in the deck section named after it
// (`sgdm.momentum`), and reads them itself: the registry's factory reads a deck into an OptimizerSetup.
using OptimizerKeys = std::function<void(DeckSchema&)>;
class OptimizerRegistry : public Registry<OptimizerSetup, const Deck&> {
 public:
  using Registry::Registry;
  void add(const std::string& name, const std::string& help, OptimizerKeys keys, Factory read);
  // Every optimizer's keys, in the order they were registered.
  void add_keys(DeckSchema& schema) const;

 private:
  std::vector<OptimizerKeys> keys_;
};
const OptimizerRegistry& optimizers();
// The same registry, to add to: from outside src/, in a static initializer (tests/optimizers/ does this).
OptimizerRegistry& optimizer_registry();

// Adds the optimizer class template Opt: Opt<T>(const Settings&, const OptimizerContext&, std::size_t n),
// with Opt<T>::Settings the values of its keys and
//   static const KeyTable<Settings>& keys();  // its keys bound to its members, all in the section `name.`
// (the constructor refuses bad combinations with an InputError naming the keys).
template <template <class> class Opt>
void add_optimizer_class(OptimizerRegistry& registry, const std::string& name, const std::string& help) {
  using Settings = typename Opt<double>::Settings;
  registry.add(name, help, [](DeckSchema& schema) { Settings::keys().declare(schema); }, [name](const Deck& deck) {
    const Settings s = Settings::keys().read(deck);
    auto setup = std::make_unique<OptimizerSetup>();
    setup->name = name;
    setup->summary = Settings::keys().summary(s);
    setup->make_float = [s](const OptimizerContext& c, std::size_t n) -> std::unique_ptr<Optimizer<float>> {
      return std::make_unique<Opt<float>>(s, c, n);
    };
    setup->make_double = [s](const OptimizerContext& c, std::size_t n) -> std::unique_ptr<Optimizer<double>> {
      return std::make_unique<Opt<double>>(s, c, n);
    };
    return setup;
  });
}

}  // namespace tokdyn
