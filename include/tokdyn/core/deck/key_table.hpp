// The keys of a class's settings struct S, each declared once and bound to its member: the table adds them
// to a schema (so --help, the deck checks and doc/commands know them) and reads a deck into an S. The key's
// name, default, range and help live in one line; the struct's members carry no second default.
//   static const KeyTable<SgdmSettings> table = KeyTable<SgdmSettings>("sgdm")
//       .real("lr", &SgdmSettings::lr, 0.03, "SGDM: learning rate", 0.0, 1e6, true)
//       .boolean("nesterov", &SgdmSettings::nesterov, true, "SGDM: Nesterov momentum");
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tokdyn/core/deck/deck.hpp"

namespace tokdyn {

template <class S>
class KeyTable {
 public:
  // Every key of the table is SECTION.key.
  explicit KeyTable(std::string section) : section_(std::move(section)) {}

  // A real key in [min, max] (min excluded when min_exclusive), as DeckSchema::add_real.
  KeyTable& real(const std::string& key, double S::*member, double def, const std::string& help,
                 double min = -std::numeric_limits<double>::infinity(),
                 double max = std::numeric_limits<double>::infinity(), bool min_exclusive = false) {
    const std::string name = section_ + "." + key;
    entries_.push_back({[=](DeckSchema& s) { s.add_real(name, def, help, min, max, min_exclusive); },
                        [=](const Deck& d, S& out) { out.*member = d.get_real(name); },
                        [=](const S& in) { return key + " " + real_text(in.*member); }});
    return *this;
  }
  // A real key in [min, max] that also takes `word` (DeckSchema::add_real_or): *flag says which, the number
  // is in *member (NaN for the word). def is the default's text.
  KeyTable& real_or(const std::string& key, double S::*member, bool S::*flag, const std::string& word,
                    const std::string& def, const std::string& help,
                    double min = -std::numeric_limits<double>::infinity(),
                    double max = std::numeric_limits<double>::infinity()) {
    const std::string name = section_ + "." + key;
    entries_.push_back({[=](DeckSchema& s) { s.add_real_or(name, word, def, help, min, max); },
                        [=](const Deck& d, S& out) {
                          out.*flag = d.is_word(name);
                          out.*member = out.*flag ? std::numeric_limits<double>::quiet_NaN() : d.get_real(name);
                        },
                        [=](const S& in) { return key + " " + (in.*flag ? word : real_text(in.*member)); }});
    return *this;
  }
  // An integer key in [min, max], as DeckSchema::add_int, held in an integer member of any width.
  template <class I>
  KeyTable& integer(const std::string& key, I S::*member, std::int64_t def, const std::string& help,
                    std::int64_t min, std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    const std::string name = section_ + "." + key;
    entries_.push_back({[=](DeckSchema& s) { s.add_int(name, def, help, min, max); },
                        [=](const Deck& d, S& out) { out.*member = static_cast<I>(d.get_int(name)); },
                        [=](const S& in) { return key + " " + std::to_string(in.*member); }});
    return *this;
  }
  // One of the words of `choices`, as DeckSchema::add_choice.
  KeyTable& choice(const std::string& key, std::string S::*member, const std::string& def,
                   const std::vector<std::string>& choices, const std::string& help) {
    const std::string name = section_ + "." + key;
    entries_.push_back({[=](DeckSchema& s) { s.add_choice(name, def, choices, help); },
                        [=](const Deck& d, S& out) { out.*member = d.get_text(name); },
                        [=](const S& in) { return key + " " + in.*member; }});
    return *this;
  }
  KeyTable& boolean(const std::string& key, bool S::*member, bool def, const std::string& help) {
    const std::string name = section_ + "." + key;
    entries_.push_back({[=](DeckSchema& s) { s.add_bool(name, def, help); },
                        [=](const Deck& d, S& out) { out.*member = d.get_bool(name); },
                        [=](const S& in) { return key + (in.*member ? " true" : " false"); }});
    return *this;
  }
  // A choice between two words, held as a bool: false for words.first, true for words.second.
  KeyTable& either(const std::string& key, bool S::*member, const std::pair<std::string, std::string>& words,
                   bool def, const std::string& help) {
    const std::string name = section_ + "." + key;
    entries_.push_back(
        {[=](DeckSchema& s) { s.add_choice(name, def ? words.second : words.first, {words.first, words.second}, help); },
         [=](const Deck& d, S& out) { out.*member = d.get_text(name) == words.second; },
         [=](const S& in) { return key + " " + (in.*member ? words.second : words.first); }});
    return *this;
  }

  void declare(DeckSchema& schema) const {
    for (const Entry& e : entries_) e.declare(schema);
  }
  S read(const Deck& deck) const {
    S s{};
    read(deck, s);
    return s;
  }
  // The table's members of `into` from the deck; the other members are left as they are.
  void read(const Deck& deck, S& into) const {
    for (const Entry& e : entries_) e.read(deck, into);
  }
  // Every key with its value in s, for a banner: "lr 0.03, momentum 0.95, nesterov true".
  std::string summary(const S& s) const {
    std::string out;
    for (const Entry& e : entries_) out += (out.empty() ? "" : ", ") + e.show(s);
    return out;
  }

 private:
  struct Entry {
    std::function<void(DeckSchema&)> declare;
    std::function<void(const Deck&, S&)> read;
    std::function<std::string(const S&)> show;
  };
  static std::string real_text(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
  }
  std::string section_;
  std::vector<Entry> entries_;
};

}  // namespace tokdyn
