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
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokdyn/core/registry.hpp"

namespace tokdyn {

// A contiguous block of the flat vector (one parameter tensor, or the tensors the authors' code keeps in
// one: Q, K and V weights together): ECD's per-tensor projection takes u . g block by block.
struct ParameterBlock {
  std::string name;
  std::size_t begin = 0, size = 0;
};

struct OptimizerSettings {
  double lr = 1.0;            // ECD: the scaled step (dt = lr / sqrt(eta)); others: the learning rate
  double weight_decay = 0;    // ECD: adds w |theta|^2 / 2 to the loss; SGDM: L2; AdamW: decoupled
  std::uint64_t seed = 1;
  // ECD (defaults of the paper) and ECDSep
  double eta = 100, F0 = 2.0, nu = 0, eps1 = 1e-10, eps2 = 1e-40;
  bool tensor_projection = false;         // u . g per block (the authors' code) instead of over the whole vector
  bool random_start = false;              // ECD: u(0) a random unit vector instead of -g/|g|
  double s = 1.0;                         // ECDSep: theta' = 2 p / (s + |p|^2)
  std::vector<ParameterBlock> blocks;     // tensor_projection: a partition of the vector
  // SGDM
  double momentum = 0.95;
  bool nesterov = true;
  double initial_buffer = 0;  // standard deviation of a random initial buffer (0: zeros)
  // AdamW
  double beta1 = 0.9, beta2 = 0.95, adam_eps = 1e-8;
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

template <class T>
using OptimizerRegistry = Registry<Optimizer<T>, const OptimizerSettings&, std::size_t>;
// The optimizers for one scalar type: ecd, ecdsep, sgdm, adamw.
template <class T>
const OptimizerRegistry<T>& optimizers();

}  // namespace tokdyn
