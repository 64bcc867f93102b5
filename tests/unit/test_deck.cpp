// Deck parsing: INI + overrides, canonical values, every kind of bad input named in the message.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/deck/key_table.hpp"
#include "tokdyn/core/errors/suggest.hpp"

using namespace tokdyn;

namespace {
DeckSchema schema() {
  DeckSchema s;
  s.add_int("model.N", 64, "tokens", 1);
  s.add_real("model.T", 1.0, "horizon", 0.0, 1e9, true);
  s.add_bool("mlp.enabled", true, "mlp on");
  s.add_choice("mlp.activation", "relu", {"relu", "tanh"}, "sigma");
  s.add_text("run.output", "run.h5", "file");
  s.add_int("run.checkpoint_every", 0, "cadence", 0).run_control = true;
  return s;
}
// Decks go to a scratch directory of this process, never into the directory the tests run from.
std::string write_deck(const std::string& name, const std::string& text) {
  struct Scratch {  // removed when the test binary exits
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tokdyn_test_deck_" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(dir); }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const Scratch scratch;
  const std::string path = (scratch.dir / name).string();
  std::ofstream(path) << text;
  return path;
}
std::string error_of(const DeckSchema& s, const std::string& path, std::vector<std::string> over) {
  try {
    Deck::parse(s, path, over);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
// "Did you mean": close spellings (edit distance with swaps), the same last component of a dotted key
// (model.width -> mlp.width), nothing for a word far from every candidate; the closest first.
TEST(Suggest, ClosestNames) {
  const std::vector<std::string> keys = {"model.N", "model.L", "mlp.width", "mlp.activation", "attention.beta"};
  EXPECT_EQ(did_you_mean("mlp.activaton", keys), " (did you mean 'mlp.activation'?)");
  EXPECT_EQ(did_you_mean("mlp.witdh", keys), " (did you mean 'mlp.width'?)");  // two letters swapped
  EXPECT_EQ(did_you_mean("model.width", keys), " (did you mean 'mlp.width'?)");
  EXPECT_EQ(did_you_mean("solver.tolerance", keys), "");
  EXPECT_EQ(closest_names("model.M", keys), (std::vector<std::string>{"model.N", "model.L"}));
  EXPECT_EQ(did_you_mean("transformr", {"transformer", "train", "sde"}), " (did you mean 'transformer'?)");
  EXPECT_EQ(did_you_mean("xyz", {"transformer", "train", "sde"}), "");
}

// A deck's "# command: NAME" line, found among its comments wherever it is; none gives "".
// A key table declares each key once (name, default, range, help) and reads a deck into its struct.
struct TableSettings {
  double rate;
  bool fast, random;
};

TEST(KeyTable, DeclaresAndReadsBoundMembers) {
  const KeyTable<TableSettings> table = KeyTable<TableSettings>("opt")
                                            .real("rate", &TableSettings::rate, 0.5, "a rate", 0.0, 1.0, true)
                                            .boolean("fast", &TableSettings::fast, true, "fast or not")
                                            .either("start", &TableSettings::random, {"zero", "random"}, false, "start");
  DeckSchema schema;
  table.declare(schema);
  ASSERT_TRUE(schema.find("opt.rate") && schema.find("opt.fast") && schema.find("opt.start"));
  EXPECT_EQ(schema.find("opt.rate")->help, "a rate");
  EXPECT_TRUE(schema.find("opt.rate")->min_exclusive);
  EXPECT_EQ(schema.find("opt.start")->choices, (std::vector<std::string>{"zero", "random"}));
  const Deck defaults = Deck::from_text(schema, "", "test");
  TableSettings s = table.read(defaults);
  EXPECT_EQ(s.rate, 0.5);
  EXPECT_TRUE(s.fast);
  EXPECT_FALSE(s.random);
  s = table.read(defaults.with_overrides({"--opt.rate=0.25", "--opt.fast=false", "--opt.start=random"}));
  EXPECT_EQ(s.rate, 0.25);
  EXPECT_FALSE(s.fast);
  EXPECT_TRUE(s.random);
  EXPECT_EQ(table.summary(s), "rate 0.25, fast false, start random");
  EXPECT_THROW(defaults.with_overrides({"--opt.rate=0"}), InputError);  // the range is the schema's
  EXPECT_THROW(defaults.with_overrides({"--opt.start=gradient"}), InputError);
}

// A real key that also takes a word: the word, numbers in range, anything else refused at parse time
// with the key named; --help shows both.
TEST(KeyTable, RealOrWord) {
  struct Offset {
    double F0;
    bool automatic;
  };
  const KeyTable<Offset> table = KeyTable<Offset>("ecd").real_or("F0", &Offset::F0, &Offset::automatic, "auto", "auto",
                                                                  "offset", -10.0, 10.0);
  DeckSchema schema;
  table.declare(schema);
  const Deck defaults = Deck::from_text(schema, "", "test");
  Offset o = table.read(defaults);
  EXPECT_TRUE(o.automatic);
  EXPECT_TRUE(std::isnan(o.F0));
  EXPECT_EQ(table.summary(o), "F0 auto");
  o = table.read(defaults.with_overrides({"--ecd.F0=2.5"}));
  EXPECT_FALSE(o.automatic);
  EXPECT_EQ(o.F0, 2.5);
  EXPECT_EQ(table.summary(o), "F0 2.5");
  for (const char* bad : {"--ecd.F0=Auto", "--ecd.F0=11", "--ecd.F0=", "--ecd.F0=nan"}) {
    try {
      defaults.with_overrides({bad});
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("deck key 'ecd.F0'"), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(schema.help_text().find("F0 = auto"), std::string::npos);
  EXPECT_NE(schema.help_text().find("(auto or >= -10, <= 10)"), std::string::npos) << schema.help_text();
}

TEST(Deck, DeclaredCommand) {
  EXPECT_EQ(deck_declared_command(write_deck("deck_cmd.ini", "# a deck\n# command: lyapunov\n[model]\nN = 8\n")),
            "lyapunov");
  EXPECT_EQ(deck_declared_command(write_deck("deck_nocmd.ini", "# a deck\n[model]\nN = 8\n")), "");
  EXPECT_EQ(deck_declared_command("no_such_deck.ini"), "");
}

}  // namespace

TEST(Deck, DefaultsFileAndOverridesInOrderOfPrecedence) {
  const DeckSchema s = schema();
  const std::string path = write_deck("deck_ok.ini", "# comment\n[model]\nN = 128\nT = 2.5\n[mlp]\nactivation = tanh\n");
  const Deck d = Deck::parse(s, path, {"--model.N=256", "--mlp.enabled=no", "--model.N=300", "--run.output="});
  EXPECT_EQ(d.get_int("model.N"), 300);  // the last of repeated overrides wins
  EXPECT_EQ(d.get_text("run.output"), "");
  EXPECT_DOUBLE_EQ(d.get_real("model.T"), 2.5);
  EXPECT_FALSE(d.get_bool("mlp.enabled"));
  EXPECT_EQ(d.get_text("mlp.activation"), "tanh");
}

TEST(Deck, ResolvedTextRoundTripsAndIsCanonical) {
  const DeckSchema s = schema();
  const Deck a = Deck::parse(s, "", {"--model.T=2.50", "--mlp.enabled=on", "--model.N=+7"});
  const Deck b = Deck::from_text(s, a.resolved_text(), "test");
  EXPECT_EQ(a.resolved_text(), b.resolved_text());
  EXPECT_NE(a.resolved_text().find("T = 2.5\n"), std::string::npos);
  EXPECT_NE(a.resolved_text().find("enabled = true\n"), std::string::npos);
  EXPECT_TRUE(a.differences(b).empty());
  const Deck c = Deck::parse(s, "", {"--model.T=2.5", "--run.checkpoint_every=5", "--model.N=7"});
  EXPECT_TRUE(a.differences(c).empty());  // run-control keys may differ
  const Deck e = Deck::parse(s, "", {"--model.N=8"});
  ASSERT_FALSE(a.differences(e).empty());
  EXPECT_EQ(a.differences(e).front(), "model.N");
}

TEST(Deck, UnknownKeysWrongTypesAndRanges) {
  const DeckSchema s = schema();
  EXPECT_NE(error_of(s, write_deck("deck_unknown.ini", "[model]\nM = 3\n"), {}).find("unknown key 'model.M'"),
            std::string::npos);
  EXPECT_NE(error_of(s, "", {"--model.foo=1"}).find("unknown key 'model.foo'"), std::string::npos);
  EXPECT_NE(error_of(s, "", {"--model.N=abc"}).find("'model.N' = 'abc': not an integer"), std::string::npos);
  EXPECT_NE(error_of(s, "", {"--model.N=1.5"}).find("not an integer"), std::string::npos);
  EXPECT_NE(error_of(s, "", {"--model.N=0"}).find("'model.N' = '0': out of range (must be >= 1)"), std::string::npos);
  EXPECT_NE(error_of(s, "", {"--model.T=0"}).find("out of range (must be > 0)"), std::string::npos);
  EXPECT_NE(error_of(s, "", {"--model.T=nan"}).find("not a finite real number"), std::string::npos);
  EXPECT_NE(error_of(s, "", {"--mlp.enabled=maybe"}).find("not a boolean"), std::string::npos);
  EXPECT_NE(error_of(s, "", {"--mlp.activation=cubic"}).find("unknown value (choose one of relu, tanh)"),
            std::string::npos);
  EXPECT_NE(error_of(s, "no_such_deck.ini", {}).find("deck file 'no_such_deck.ini' does not exist"), std::string::npos);
  EXPECT_NE(error_of(s, write_deck("deck_syntax.ini", "[model]\nthis line has no equals sign\n"), {}).find("deck_syntax.ini"),
            std::string::npos);
}

TEST(Deck, OutOfRangeMessageSaysWhyWhenTheKeyDoes) {
  DeckSchema s = schema();
  s.add_real("attention.beta", 1.0, "beta", 0.0, 709.5).range_reason = "E_beta would overflow";
  EXPECT_EQ(error_of(s, "", {"--attention.beta=800"}),
            "deck key 'attention.beta' = '800': out of range (must be <= 709.5: E_beta would overflow)");
  EXPECT_EQ(error_of(s, "", {"--attention.beta=-1"}),
            "deck key 'attention.beta' = '-1': out of range (must be >= 0: E_beta would overflow)");
  EXPECT_EQ(error_of(s, "", {"--model.N=0"}), "deck key 'model.N' = '0': out of range (must be >= 1)");
}

TEST(Deck, KeyGivenTwiceInTheFileIsRefused) {
  const DeckSchema s = schema();
  // Twice in one section, with the same and with different values.
  auto twice = [](const std::string& path) { return "deck '" + path + "': key 'model.N' is given twice"; };
  const std::string a = write_deck("deck_twice.ini", "[model]\nN = 64\nT = 2\nN = 64\n");
  EXPECT_EQ(error_of(s, a, {}), twice(a));
  const std::string b = write_deck("deck_twice2.ini", "[model]\nN = 64\nN = 32\n");
  EXPECT_EQ(error_of(s, b, {}), twice(b));
  // In two sections of the same name.
  const std::string c = write_deck("deck_twice3.ini", "[model]\nN = 64\n[mlp]\nenabled = no\n[model]\nN = 32\n");
  EXPECT_EQ(error_of(s, c, {}), twice(c));
  // A repeated section with other keys, and a key of the file overridden (even twice) on the command line: fine.
  const Deck d = Deck::parse(s, write_deck("deck_sections.ini", "[model]\nN = 64\n[mlp]\nenabled = no\n[model]\nT = 3\n"),
                             {"--model.N=10", "--model.N=12"});
  EXPECT_EQ(d.get_int("model.N"), 12);
  EXPECT_DOUBLE_EQ(d.get_real("model.T"), 3.0);
  // A stored deck (run file, checkpoint) is held to the same rule.
  try {
    Deck::from_text(s, "[model]\nN = 1\nN = 2\n", "ckpt.h5");
    ADD_FAILURE() << "a stored deck with a key given twice was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "deck stored in 'ckpt.h5': key 'model.N' is given twice");
  }
}
TEST(Deck, HelpListsEveryKeyWithDefault) {
  const std::string h = schema().help_text();
  for (const char* k : {"N = 64", "T = 1", "enabled = true", "activation = relu", "output = run.h5", "[model]"})
    EXPECT_NE(h.find(k), std::string::npos) << k;
  EXPECT_NE(h.find("relu|tanh"), std::string::npos);
}
