// "One class per style, registered by name": a name -> factory table for each family of styles
// (attention kernels, dynamics, commands). Each family lists its members in one styles file.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

}  // namespace tokdyn
