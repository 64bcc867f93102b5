#include "tokdyn/core/deck/deck.hpp"

#include <boost/program_options.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/errors/suggest.hpp"

namespace po = boost::program_options;

namespace tokdyn {
namespace {

// Shortest text that reads back to the same double.
std::string format_real(double v) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ptr);
}

std::string section_of(const std::string& name) { return name.substr(0, name.find('.')); }

bool parse_int(const std::string& text, std::int64_t& out) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last && first != last;
}

bool parse_real(const std::string& text, double& out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(out);
}

bool parse_bool(const std::string& text, bool& out) {
  static const char* yes[] = {"true", "yes", "on", "1"};
  static const char* no[] = {"false", "no", "off", "0"};
  for (const char* y : yes)
    if (text == y) return out = true, true;
  for (const char* n : no)
    if (text == n) return out = false, true;
  return false;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

po::options_description boost_options(const DeckSchema& schema) {
  po::options_description desc;
  for (const KeySpec& k : schema.keys()) desc.add_options()(k.name.c_str(), po::value<std::string>(), "");
  return desc;
}

// Boost reports "the option '--model.N' ..."; strip its decorations down to the key name.
std::string key_from_boost(const po::error_with_option_name& e) {
  std::string name = e.get_option_name();
  while (!name.empty() && name.front() == '-') name.erase(name.begin());
  return name.substr(0, name.find('='));
}

// A deck file gives each key once: a second line for it (in the same section or in a repeated one) is
// more likely a forgotten edit than an intended override, so it is refused; overrides belong on the
// command line. where: "deck 'x.ini'".
void store_parsed(const po::basic_parsed_options<char>& parsed, std::map<std::string, std::string>& values,
                  const std::string& where) {
  for (const auto& opt : parsed.options) {
    if (opt.value.empty()) continue;
    if (!values.emplace(opt.string_key, trim(opt.value.front())).second)
      throw InputError(where + ": key '" + opt.string_key + "' is given twice");
  }
}

// Overrides "--section.key=value" (the value may be empty), checked against the schema; a key given
// twice takes its last value, so job scripts can append to what the user passed.
void parse_overrides(const DeckSchema& schema, const std::vector<std::string>& overrides,
                     std::map<std::string, std::string>& values) {
  for (const std::string& o : overrides) {
    const std::string body = o.rfind("--", 0) == 0 ? o.substr(2) : o;
    const auto eq = body.find('=');
    const std::string key = body.substr(0, eq);
    if (!schema.find(key))
      throw InputError("unknown key '" + key + "' on the command line" + did_you_mean(key, schema.names()));
    if (eq == std::string::npos) throw InputError("deck key '" + key + "' on the command line needs a value");
    values[key] = trim(body.substr(eq + 1));
  }
}

}  // namespace

static KeySpec make_spec(const std::string& name, KeyKind kind, const std::string& def, const std::string& help) {
  KeySpec k;
  k.name = name;
  k.kind = kind;
  k.default_text = def;
  k.help = help;
  return k;
}

KeySpec& DeckSchema::add(KeySpec spec) {
  for (const KeySpec& k : keys_)
    if (k.name == spec.name) throw SystemError("deck key registered twice: " + spec.name);
  keys_.push_back(std::move(spec));
  return keys_.back();
}

KeySpec& DeckSchema::add_int(const std::string& name, std::int64_t def, const std::string& help,
                             std::int64_t min, std::int64_t max) {
  KeySpec k = make_spec(name, KeyKind::integer, std::to_string(def), help);
  k.min = static_cast<double>(min);
  k.max = static_cast<double>(max);
  return add(k);
}

KeySpec& DeckSchema::add_real(const std::string& name, double def, const std::string& help, double min,
                              double max, bool min_exclusive) {
  KeySpec k = make_spec(name, KeyKind::real, format_real(def), help);
  k.min = min;
  k.max = max;
  k.min_exclusive = min_exclusive;
  return add(k);
}

KeySpec& DeckSchema::add_real_or(const std::string& name, const std::string& word, const std::string& def,
                                 const std::string& help, double min, double max) {
  KeySpec k = make_spec(name, KeyKind::real, def, help);
  k.min = min;
  k.max = max;
  k.choices = {word};
  return add(k);
}

KeySpec& DeckSchema::add_bool(const std::string& name, bool def, const std::string& help) {
  return add(make_spec(name, KeyKind::boolean, def ? "true" : "false", help));
}

KeySpec& DeckSchema::add_text(const std::string& name, const std::string& def, const std::string& help) {
  return add(make_spec(name, KeyKind::text, def, help));
}

KeySpec& DeckSchema::add_file(const std::string& name, const std::string& def, const std::string& help) {
  KeySpec& k = add(make_spec(name, KeyKind::text, def, help));
  k.input_file = true;
  return k;
}

KeySpec& DeckSchema::add_choice(const std::string& name, const std::string& def,
                                const std::vector<std::string>& choices, const std::string& help) {
  KeySpec k = make_spec(name, KeyKind::choice, def, help);
  k.choices = choices;
  return add(k);
}

std::vector<std::string> DeckSchema::names() const {
  std::vector<std::string> out;
  for (const KeySpec& k : keys_) out.push_back(k.name);
  return out;
}

const KeySpec* DeckSchema::find(const std::string& name) const {
  for (const KeySpec& k : keys_)
    if (k.name == name) return &k;
  return nullptr;
}

std::string DeckSchema::help_text() const {
  std::ostringstream s;
  // Each section once, in the order sections first appear, its keys in schema order (a command's schema
  // may add keys to a section after another section's).
  std::vector<std::string> sections;
  for (const KeySpec& k : keys_)
    if (std::find(sections.begin(), sections.end(), section_of(k.name)) == sections.end())
      sections.push_back(section_of(k.name));
  std::vector<const KeySpec*> ordered;
  for (const std::string& sec : sections)
    for (const KeySpec& k : keys_)
      if (section_of(k.name) == sec) ordered.push_back(&k);
  std::string section;
  for (const KeySpec* key_spec : ordered) {
    const KeySpec& k = *key_spec;
    if (section_of(k.name) != section) {
      section = section_of(k.name);
      s << "\n[" << section << "]\n";
    }
    std::string range;
    if (k.kind == KeyKind::choice) {
      for (const auto& c : k.choices) range += (range.empty() ? "" : "|") + c;
    } else if (k.kind == KeyKind::integer || k.kind == KeyKind::real) {
      for (const auto& c : k.choices) range += c + " or ";
      const bool lo = std::isfinite(k.min) && k.min > -9e18, hi = std::isfinite(k.max) && k.max < 9e18;
      if (lo) range += (k.min_exclusive ? "> " : ">= ") + format_real(k.min);
      if (lo && hi) range += ", ";
      if (hi) range += (k.max_exclusive ? "< " : "<= ") + format_real(k.max);
    } else if (k.kind == KeyKind::boolean) {
      range = "true|false";
    }
    std::string key = k.name.substr(k.name.find('.') + 1) + " = " + (k.default_text.empty() ? "\"\"" : k.default_text);
    s << "  " << std::left << std::setw(34) << key << " " << k.help;
    if (!range.empty()) s << " (" << range << ")";
    s << "\n";
  }
  return s.str();
}

Deck Deck::parse(const DeckSchema& schema, const std::string& deck_path, const std::vector<std::string>& overrides) {
  Deck deck(schema);
  const po::options_description desc = boost_options(schema);
  std::map<std::string, std::string> from_file, from_line;
  if (!deck_path.empty()) {
    if (!std::filesystem::is_regular_file(deck_path))
      throw InputError("deck file '" + deck_path + "' does not exist or is not a regular file");
    std::ifstream in(deck_path);
    if (!in) throw InputError("deck file '" + deck_path + "' cannot be read");
    try {
      store_parsed(po::parse_config_file(in, desc, false), from_file, "deck '" + deck_path + "'");
    } catch (const po::unknown_option& e) {
      const std::string key = key_from_boost(e);
      throw InputError("deck '" + deck_path + "': unknown key '" + key + "'" + did_you_mean(key, schema.names()));
    } catch (const po::invalid_config_file_syntax& e) {
      throw InputError("deck '" + deck_path + "': " + e.what());
    } catch (const po::error& e) {
      throw InputError("deck '" + deck_path + "': " + e.what());
    }
  }
  parse_overrides(schema, overrides, from_line);
  for (const KeySpec& k : schema.keys()) deck.values_[k.name] = k.default_text;
  for (const auto& [k, v] : from_file) deck.values_[k] = v;
  for (const auto& [k, v] : from_line) deck.values_[k] = v;
  deck.validate();
  return deck;
}

Deck Deck::from_text(const DeckSchema& schema, const std::string& text, const std::string& origin) {
  Deck deck(schema);
  const po::options_description desc = boost_options(schema);
  std::istringstream in(text);
  std::map<std::string, std::string> values;
  try {
    store_parsed(po::parse_config_file(in, desc, false), values, "deck stored in '" + origin + "'");
  } catch (const po::error& e) {
    throw InputError("deck stored in '" + origin + "' does not fit this version: " + e.what());
  }
  for (const KeySpec& k : schema.keys()) deck.values_[k.name] = k.default_text;
  for (const auto& [k, v] : values) deck.values_[k] = v;
  deck.validate();
  return deck;
}

Deck Deck::with_overrides(const std::vector<std::string>& overrides) const {
  Deck deck = *this;
  std::map<std::string, std::string> from_line;
  parse_overrides(*schema_, overrides, from_line);
  for (const auto& [k, v] : from_line) deck.values_[k] = v;
  deck.validate();
  return deck;
}

void Deck::validate() {
  // Values are rewritten in canonical form so that '1' and '1.0' compare equal on restart.
  for (const KeySpec& k : schema_->keys()) {
    const std::string v = raw(k.name);
    // Run files and checkpoints store the deck as INI text, where '#' starts a comment and a line break ends
    // the value: such a value (from the command line) would read back as another.
    if (v.find_first_of(std::string("#\n\r\0", 4)) != std::string::npos)
      throw InputError("deck key '" + k.name + "': its value holds '#' or a line break, which the deck stored in "
                       "the run file cannot give back (rename the file, or drop the character)");
    const std::string where = "deck key '" + k.name + "' = '" + v + "'";
    double x = 0;
    switch (k.kind) {
      case KeyKind::integer: {
        std::int64_t i = 0;
        if (!parse_int(v, i)) throw InputError(where + ": not an integer");
        x = static_cast<double>(i);
        values_[k.name] = std::to_string(i);
        break;
      }
      case KeyKind::real:
        if (std::find(k.choices.begin(), k.choices.end(), v) != k.choices.end()) continue;  // add_real_or's word
        if (!parse_real(v, x)) throw InputError(where + ": not a finite real number");
        values_[k.name] = format_real(x);
        break;
      case KeyKind::boolean: {
        bool b = false;
        if (!parse_bool(v, b)) throw InputError(where + ": not a boolean (true/false)");
        values_[k.name] = b ? "true" : "false";
        continue;
      }
      case KeyKind::choice: {
        bool found = false;
        std::string list;
        for (const auto& c : k.choices) found |= (c == v), list += (list.empty() ? "" : ", ") + c;
        if (!found) throw InputError(where + ": unknown value (choose one of " + list + ")" + did_you_mean(v, k.choices));
        continue;
      }
      case KeyKind::text:
        continue;
    }
    const std::string reason = k.range_reason.empty() ? "" : ": " + k.range_reason;
    if (k.min_exclusive ? !(x > k.min) : !(x >= k.min))
      throw InputError(where + ": out of range (must be " + (k.min_exclusive ? "> " : ">= ") + format_real(k.min) +
                       reason + ")");
    if (k.max_exclusive ? !(x < k.max) : !(x <= k.max))
      throw InputError(where + ": out of range (must be " + (k.max_exclusive ? "< " : "<= ") + format_real(k.max) + reason + ")");
  }
}

const std::string& Deck::raw(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw SystemError("deck key not in schema: " + name);
  return it->second;
}

std::int64_t Deck::get_int(const std::string& name) const {
  std::int64_t i = 0;
  if (!parse_int(raw(name), i)) throw InputError("deck key '" + name + "': not an integer");
  return i;
}

bool Deck::is_word(const std::string& name) const {
  const KeySpec* k = schema_->find(name);
  const std::string& v = raw(name);
  return k && k->kind == KeyKind::real && std::find(k->choices.begin(), k->choices.end(), v) != k->choices.end();
}

double Deck::get_real(const std::string& name) const {
  double x = 0;
  if (!parse_real(raw(name), x)) throw InputError("deck key '" + name + "': not a real number");
  return x;
}

bool Deck::get_bool(const std::string& name) const {
  bool b = false;
  if (!parse_bool(raw(name), b)) throw InputError("deck key '" + name + "': not a boolean");
  return b;
}

const std::string& Deck::get_text(const std::string& name) const { return raw(name); }

bool Deck::has(const std::string& name) const { return schema_->find(name) != nullptr; }

std::string Deck::resolved_text() const {
  std::ostringstream s;
  std::string section;
  for (const KeySpec& k : schema_->keys()) {
    if (section_of(k.name) != section) {
      section = section_of(k.name);
      s << (s.tellp() > 0 ? "\n" : "") << "[" << section << "]\n";
    }
    s << k.name.substr(k.name.find('.') + 1) << " = " << raw(k.name) << "\n";
  }
  return s.str();
}

std::vector<std::string> Deck::differences(const Deck& other) const {
  std::vector<std::string> keys;
  for (const KeySpec& k : schema_->keys())
    if (!k.run_control && raw(k.name) != other.raw(k.name)) keys.push_back(k.name);
  return keys;
}

std::string Deck::hash() const {
  std::uint64_t h = 1469598103934665603ull;
  for (const KeySpec& k : schema_->keys()) {
    if (k.run_control) continue;
    for (char c : k.name + "=" + raw(k.name) + "\n") h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<std::pair<std::string, std::string>> Deck::input_files() const {
  std::vector<std::pair<std::string, std::string>> files;
  for (const KeySpec& k : schema_->keys())
    if (k.input_file && !raw(k.name).empty()) files.emplace_back(k.name, raw(k.name));
  return files;
}

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    items.push_back(b == std::string::npos ? std::string() : item.substr(b, e - b + 1));
  }
  return items;
}

}  // namespace

std::vector<std::int64_t> parse_index_list(const std::string& key, const std::string& text, const std::string& what) {
  std::vector<std::int64_t> values;
  for (const std::string& item : split_list(text)) {
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 0)
      throw InputError("deck key '" + key + "': '" + item + "' is not " + what + " (a non-negative integer)");
    values.push_back(v);
  }
  return values;
}

std::vector<double> parse_real_list(const std::string& key, const std::string& text, bool signed_values) {
  std::vector<double> values;
  for (const std::string& item : split_list(text)) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !std::isfinite(v) || (v < 0 && !signed_values))
      throw InputError("deck key '" + key + "': '" + item + "' is not a finite" +
                       (signed_values ? "" : " non-negative") + " number");
    values.push_back(v);
  }
  return values;
}

std::string deck_declared_command(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find_first_not_of(" \t");
    if (at == std::string::npos || (line[at] != '#' && line[at] != ';')) continue;
    const std::string body = trim(line.substr(at + 1));
    if (body.rfind("command:", 0) == 0) return trim(body.substr(8));
  }
  return "";
}

bool is_deck_name(const std::string& s) { return s.size() > 4 && s.compare(s.size() - 4, 4, ".ini") == 0; }

std::string deck_purpose(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '#') continue;
    const auto start = line.find_first_not_of("# ");
    if (start == std::string::npos || line.compare(start, 8, "command:") == 0) continue;
    std::string body = line.substr(start);
    if (body.size() > 100) body = body.substr(0, body.rfind(' ', 97)) + " ...";
    return body;
  }
  return "(no description)";
}

}  // namespace tokdyn
