// "One class per style, registered by name": a name -> factory table for each family of styles
// (attention kernels, dynamics, commands). Each family lists its members in one styles file.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/core/deck/key_table.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

template <class Base, class... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Base>(Args...)>;

  explicit Registry(std::string family) : family_(std::move(family)) {}

  void add(const std::string& name, const std::string& help, Factory factory) {
    if (entries_.count(name)) throw SystemError(family_ + " '" + name + "' registered twice");
    entries_[name] = Entry{help, std::move(factory)};
    order_.push_back(name);
  }

  std::unique_ptr<Base> make(const std::string& name, Args... args) const {
    require(name);
    return entries_.at(name).factory(std::forward<Args>(args)...);
  }

  // InputError naming the family and its members unless name is one of them.
  void require(const std::string& name) const {
    if (entries_.count(name)) return;
    std::string known;
    for (const auto& n : order_) known += (known.empty() ? "" : ", ") + n;
    throw InputError("unknown " + family_ + " '" + name + "' (known: " + known + ")");
  }

  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  const std::vector<std::string>& names() const { return order_; }
  const std::string& help(const std::string& name) const { return entries_.at(name).help; }

 private:
  struct Entry {
    std::string help;
    Factory factory;
  };
  std::string family_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

// A registry whose classes read keys into one settings struct Spec (LAMMPS: a style parses its own arguments):
// each class declares its own (KeyTable<Spec>, shared by a class's registered variants), and the family's
// deck keys are the common ones plus every class's table, declared and read once each.
template <class Base, class Spec, class... Args>
class KeyedRegistry : public Registry<Base, Args...> {
 public:
  using Registry<Base, Args...>::Registry;
  using typename Registry<Base, Args...>::Factory;

  // keys: the keys the class reads beyond the family's common ones (null: none).
  void add(const std::string& name, const std::string& help, Factory factory, const KeyTable<Spec>* keys = nullptr) {
    Registry<Base, Args...>::add(name, help, std::move(factory));
    if (keys && std::find(keys_.begin(), keys_.end(), keys) == keys_.end()) keys_.push_back(keys);
  }
  // Every class's keys into the schema, and from the deck into spec, in the order the classes were added.
  void declare_keys(DeckSchema& schema) const {
    for (const KeyTable<Spec>* keys : keys_) keys->declare(schema);
  }
  void read_keys(const Deck& deck, Spec& spec) const {
    for (const KeyTable<Spec>* keys : keys_) keys->read(deck, spec);
  }

 private:
  std::vector<const KeyTable<Spec>*> keys_;
};

}  // namespace tokdyn
