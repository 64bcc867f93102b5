// An optimizer of train/ made as a deck makes it: its own keys set by overrides ("ecd.lr=0.7"), the rest
// at their defaults.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/train/optimizer.hpp"

namespace tokdyn::test {

template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(const std::string& name, const std::vector<std::string>& keys,
                                             std::size_t n, const OptimizerContext& context = {}) {
  static const DeckSchema schema = [] {
    DeckSchema s;
    optimizers().add_keys(s);
    return s;
  }();
  const Deck deck = Deck::from_text(schema, "", "test").with_overrides(keys);
  return optimizers().make(name, deck)->make<T>(context, n);
}

}  // namespace tokdyn::test
