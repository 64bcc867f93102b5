// The list of optimizers: adding one is its file (its class, its keys, its add_ function) plus one line here.
#include "styles.hpp"

namespace tokdyn {

void OptimizerRegistry::add(const std::string& name, const std::string& help, OptimizerKeys keys, Factory read) {
  Registry::add(name, help, std::move(read));
  keys_.push_back(std::move(keys));
}

void OptimizerRegistry::add_keys(DeckSchema& schema) const {
  for (const OptimizerKeys& keys : keys_) keys(schema);
}

OptimizerRegistry& optimizer_registry() {
  static OptimizerRegistry r = [] {
    OptimizerRegistry r("optimizer");
    for (auto add : {add_ecd, add_ecd_sep, add_sgdm, add_adamw}) add(r);
    return r;
  }();
  return r;
}

const OptimizerRegistry& optimizers() { return optimizer_registry(); }

}  // namespace tokdyn
