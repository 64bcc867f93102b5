// Input decks: INI files plus --section.key=value overrides, checked against a schema of typed keys.
// One parser for every command; the resolved deck (every key, defaults filled in) is stored in run files.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace tokdyn {

enum class KeyKind { integer, real, boolean, text, choice };

struct KeySpec {
  std::string name;  // "section.key"
  KeyKind kind = KeyKind::text;
  std::string default_text;
  std::string help;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  bool max_exclusive = false;  // set on the returned spec: `--help` and the check read the same flag
  std::vector<std::string> choices;  // a choice key's words; for a real key, a word it takes besides numbers
  std::string range_reason;  // why the range is what it is, added to an out-of-range message
  bool run_control = false;  // may differ between a checkpoint and its restart (output cadence, ...)
  bool input_file = false;   // names a file the run reads (must not be one of the files it writes)
};

class DeckSchema {
 public:
  KeySpec& add_int(const std::string& name, std::int64_t def, const std::string& help,
                   std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                   std::int64_t max = std::numeric_limits<std::int64_t>::max());
  KeySpec& add_real(const std::string& name, double def, const std::string& help,
                    double min = -std::numeric_limits<double>::infinity(),
                    double max = std::numeric_limits<double>::infinity(), bool min_exclusive = false);
  // A real key that also takes one word (e.g. "auto"); def is the default's text, either.
  KeySpec& add_real_or(const std::string& name, const std::string& word, const std::string& def,
                       const std::string& help, double min = -std::numeric_limits<double>::infinity(),
                       double max = std::numeric_limits<double>::infinity());
  KeySpec& add_bool(const std::string& name, bool def, const std::string& help);
  KeySpec& add_text(const std::string& name, const std::string& def, const std::string& help);
  // A text key that names an input file.
  KeySpec& add_file(const std::string& name, const std::string& def, const std::string& help);
  KeySpec& add_choice(const std::string& name, const std::string& def,
                      const std::vector<std::string>& choices, const std::string& help);

  const std::vector<KeySpec>& keys() const { return keys_; }
  const KeySpec* find(const std::string& name) const;
  std::vector<std::string> names() const;  // every key, section.key
  // Every key, by section, with default and meaning (for --help).
  std::string help_text() const;

 private:
  KeySpec& add(KeySpec spec);
  std::vector<KeySpec> keys_;
};

class Deck {
 public:
  // deck_path may be empty (defaults only); overrides are "--section.key=value" arguments.
  static Deck parse(const DeckSchema& schema, const std::string& deck_path,
                    const std::vector<std::string>& overrides);
  // From the resolved text stored in a run file or checkpoint.
  static Deck from_text(const DeckSchema& schema, const std::string& text, const std::string& origin);
  // This deck with "--section.key=value" overrides applied (and checked).
  Deck with_overrides(const std::vector<std::string>& overrides) const;

  std::int64_t get_int(const std::string& name) const;
  double get_real(const std::string& name) const;
  // True when a real key of add_real_or holds its word instead of a number.
  bool is_word(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_text(const std::string& name) const;
  // True when the schema has the key (commands share helpers that read optional keys).
  bool has(const std::string& name) const;

  // INI text with every key of the schema, in schema order.
  std::string resolved_text() const;
  // Keys (not run_control ones) whose values differ from other's.
  std::vector<std::string> differences(const Deck& other) const;
  // Hash (64-bit FNV-1a, hex) of the keys that fix the results: equal decks up to run-control keys hash equal.
  std::string hash() const;
  const DeckSchema& schema() const { return *schema_; }
  // The input files the deck names (key, path), empty values left out.
  std::vector<std::pair<std::string, std::string>> input_files() const;

 private:
  Deck(const DeckSchema& schema) : schema_(&schema) {}
  void validate();
  const std::string& raw(const std::string& name) const;

  const DeckSchema* schema_;
  std::map<std::string, std::string> values_;
};

// Comma lists in the text of a deck key (blanks around items ignored): non-negative integers, each
// described by `what` in the error ("a token id"), or finite non-negative reals (any finite reals with
// signed_values). InputError naming the key and the first bad item.
std::vector<std::int64_t> parse_index_list(const std::string& key, const std::string& text, const std::string& what);
std::vector<double> parse_real_list(const std::string& key, const std::string& text, bool signed_values = false);

// A deck file name: ends in .ini (so a PETSc option's value and a mistyped command can be told from it).
bool is_deck_name(const std::string& arg);

// The command a deck names in a "# command: NAME" comment line ("" when it names none, or cannot be read):
// tokdyn refuses the deck under another command.
std::string deck_declared_command(const std::string& path);
// What a deck is for: its first comment line that is not the command line, cut at a word near 100
// characters; "(no description)" when it has none (tokdyn decks).
std::string deck_purpose(const std::string& path);

}  // namespace tokdyn
