// The list of optimizers: adding one is its class (a file with its factory) plus one line here.
#include "styles.hpp"

namespace tokdyn {

template <class T>
const OptimizerRegistry<T>& optimizers() {
  static const OptimizerRegistry<T> r = [] {
    OptimizerRegistry<T> r("optimizer");
    r.add("ecd", "energy-conserving descent: unit-speed velocity, kicked by the gradient across it", make_ecd<T>);
    r.add("ecdsep", "ECD with the separable Hamiltonian eta log(F - F0) + log(s + |p|^2), symplectic Euler",
          make_ecd_sep<T>);
    r.add("sgdm", "SGD with heavy-ball momentum (Nesterov by default), optional random initial buffer", make_sgdm<T>);
    r.add("adamw", "Adam with decoupled weight decay", make_adamw<T>);
    return r;
  }();
  return r;
}

template const OptimizerRegistry<float>& optimizers<float>();
template const OptimizerRegistry<double>& optimizers<double>();

}  // namespace tokdyn
